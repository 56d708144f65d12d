//go:build (linux || freebsd || openbsd || netbsd) && !android

package gui

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

const (
	watcherName = "org.kde.StatusNotifierWatcher"
	// trayItemPath is where fyne.io/systray serves the item, and what it
	// registers: the watcher records the connection's unique name with it.
	trayItemPath = "/StatusNotifierItem"
)

// stayInTray keeps the app's tray item registered with the
// StatusNotifierWatcher until ctx ends. The systray registers once when it
// starts and once each time a watcher appears, and both calls can be lost:
// a tray host that takes the watcher's name before it serves the object
// (gtk-sni-tray-standalone does) answers the second with UnknownObject, so
// the icon never shows when the panel starts after the app (an app started
// at login). So this registers the item again, with a growing pause, until
// the watcher lists it (for five minutes at most: a watcher that refuses
// that long waits for the next one).
//
// It registers exactly what the systray does, from the systray's own
// connection (godbus's shared session connection), so a watcher sees one
// item however many times it is registered: a second registration under
// another name would show as a second icon.
func stayInTray(ctx context.Context) {
	conn, err := dbus.SessionBus() // shared with the systray: never closed here
	if err != nil {
		return // no session bus: no tray either
	}
	// The same rule the systray adds, and no other: the systray's own
	// listener reads every signal this connection gets and stops at one
	// that is not a NameOwnerChanged.
	match := []dbus.MatchOption{
		dbus.WithMatchObjectPath("/org/freedesktop/DBus"),
		dbus.WithMatchInterface("org.freedesktop.DBus"),
		dbus.WithMatchSender("org.freedesktop.DBus"),
		dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, watcherName),
	}
	if err := conn.AddMatchSignalContext(ctx, match...); err != nil {
		return
	}
	defer conn.RemoveMatchSignal(match...)
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	defer conn.RemoveSignal(signals)

	// A watcher already there was registered with by the systray as it
	// started; a look, once that is done, makes sure it took the item.
	settled := time.After(5 * time.Second)
	const firstPause, maxPause, patience = 100 * time.Millisecond, 5 * time.Second, 5 * time.Minute
	// A round of tries: pending while the watcher has not listed the item.
	var (
		pending bool
		pause   time.Duration
		retry   <-chan time.Time
		since   time.Time // the round's first refusal
	)
	round := func(want bool) { pending, pause, retry, since = want, firstPause, nil, time.Time{} }
	for {
		if pending && retry == nil {
			switch {
			case registerTrayItem(ctx, conn):
				round(false)
			case since.IsZero() || time.Since(since) < patience:
				if since.IsZero() {
					since = time.Now()
				}
				retry = time.After(pause)
				pause = min(2*pause, maxPause)
			default:
				round(false)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-retry:
			retry = nil
		case <-settled:
			settled = nil
			if !pending && busHasOwner(ctx, conn, watcherName) {
				round(true)
			}
		case sig, ok := <-signals:
			if !ok {
				return // the connection closed (the systray quit)
			}
			if sig.Name != "org.freedesktop.DBus.NameOwnerChanged" || len(sig.Body) < 3 {
				continue
			}
			// A new watcher: look at once. No watcher: nothing to
			// register with until one comes.
			owner, _ := sig.Body[2].(string)
			round(owner != "")
		}
	}
}

// registerTrayItem makes sure the watcher lists the item; false when the
// watcher refused or did not answer (it may not serve its object yet).
func registerTrayItem(ctx context.Context, conn *dbus.Conn) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Until the systray serves the item (it takes this name once it has
	// exported it), a watcher would find nothing there.
	if !busHasOwner(ctx, conn, fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid())) {
		return false
	}
	watcher := conn.Object(watcherName, "/StatusNotifierWatcher")
	if trayItemListed(watcher, conn) {
		return true
	}
	return watcher.CallWithContext(ctx, watcherName+".RegisterStatusNotifierItem", 0, trayItemPath).Err == nil
}

// trayItemListed reports whether the watcher's RegisteredStatusNotifierItems
// holds the item: the connection's unique name, alone or with the path.
func trayItemListed(watcher dbus.BusObject, conn *dbus.Conn) bool {
	names := conn.Names()
	if len(names) == 0 {
		return false
	}
	v, err := watcher.GetProperty(watcherName + ".RegisteredStatusNotifierItems")
	if err != nil {
		return false
	}
	items, _ := v.Value().([]string)
	return slices.ContainsFunc(items, func(s string) bool { return s == names[0] || strings.HasPrefix(s, names[0]+"/") })
}

// busHasOwner reports whether name has an owner on the bus.
func busHasOwner(ctx context.Context, conn *dbus.Conn, name string) bool {
	var has bool
	err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has)
	return err == nil && has
}
