//go:build linux

package main

/*
#cgo pkg-config: x11
#include <X11/Xlib.h>
#include <stdlib.h>
#include <string.h>

// closeWindow asks the window titled name to close, as a window manager's
// close button does (WM_DELETE_WINDOW); 0 when no such window was found.
static int closeWindow(const char *name) {
	Display *d = XOpenDisplay(NULL);
	if (!d) return 0;
	Window root = DefaultRootWindow(d), r, p, *kids = NULL;
	unsigned int n = 0;
	int found = 0;
	if (XQueryTree(d, root, &r, &p, &kids, &n)) {
		for (unsigned int i = 0; i < n; i++) {
			char *title = NULL;
			if (XFetchName(d, kids[i], &title) && title) {
				if (strcmp(title, name) == 0) {
					XEvent ev;
					memset(&ev, 0, sizeof ev);
					ev.xclient.type = ClientMessage;
					ev.xclient.window = kids[i];
					ev.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
					ev.xclient.format = 32;
					ev.xclient.data.l[0] = XInternAtom(d, "WM_DELETE_WINDOW", False);
					ev.xclient.data.l[1] = CurrentTime;
					XSendEvent(d, kids[i], False, NoEventMask, &ev);
					found = 1;
				}
				XFree(title);
			}
		}
		if (kids) XFree(kids);
	}
	XSync(d, False);
	XCloseDisplay(d);
	return found;
}
*/
import "C"

import "unsafe"

// closeWindow closes the top-level window titled name as a window
// manager's close button would (Xvfb runs none).
func closeWindow(name string) bool {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.closeWindow(cs) == 1
}
