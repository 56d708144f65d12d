#!/usr/bin/python3
"""Drops one file on an X window as a file manager does (XDND, version 5).

usage: xdnd.py WINDOW-ID PATH

Prints "dropped" and exits 0 when the window took the drop and said it is
done with it (XdndFinished); exits 1 with what happened otherwise.
"""
import sys
import time

from Xlib import X, display
from Xlib.protocol import event

target_id, path = int(sys.argv[1], 0), sys.argv[2]
d = display.Display()
root = d.screen().root
target = d.create_resource_object("window", target_id)
source = root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)


def atom(name):
    return d.intern_atom(name)


def send(kind, data):
    target.send_event(event.ClientMessage(window=target, client_type=atom(kind), data=(32, data)))
    d.flush()


uri_list = ("file://" + path + "\r\n").encode()
source.set_selection_owner(atom("XdndSelection"), X.CurrentTime)
send("XdndEnter", [source.id, 5 << 24, atom("text/uri-list"), 0, 0])
geo = target.get_geometry()
at = target.translate_coords(root, 0, 0)  # the window's origin on the screen
x, y = -at.x + geo.width // 2, -at.y + geo.height // 2
send("XdndPosition", [source.id, 0, (x << 16) | y, X.CurrentTime, atom("XdndActionCopy")])

accepted, dropped = None, False
deadline = time.time() + 10
while time.time() < deadline:
    while d.pending_events():
        e = d.next_event()
        if e.type == X.ClientMessage and e.client_type == atom("XdndStatus"):
            accepted = e.data[1][1] & 1
            if not accepted:
                send("XdndLeave", [source.id, 0, 0, 0, 0])
                sys.exit("the window refused the drop (XdndStatus says no)")
            if not dropped:
                send("XdndDrop", [source.id, 0, X.CurrentTime, 0, 0])
                dropped = True
        elif e.type == X.SelectionRequest:
            e.requestor.change_property(e.property, atom("text/uri-list"), 8, uri_list)
            e.requestor.send_event(event.SelectionNotify(time=e.time, requestor=e.requestor, selection=e.selection,
                                                         target=e.target, property=e.property))
            d.flush()
        elif e.type == X.ClientMessage and e.client_type == atom("XdndFinished"):
            print("dropped")
            sys.exit(0)
    time.sleep(0.02)
sys.exit("no XdndFinished in 10 s (XdndStatus: %s, XdndDrop sent: %s)" % (accepted, dropped))
