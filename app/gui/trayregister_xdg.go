//go:build (linux || freebsd || openbsd || netbsd) && !android

package gui

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"
)

// stayInTray registers the app's tray item with the StatusNotifierWatcher
// each time one appears on the session bus, until ctx ends. The systray
// registers once when a watcher appears, and a tray host that takes the
// watcher's name before it serves the object (gtk-sni-tray-standalone does)
// answers that one call with UnknownObject: the icon then never shows when
// the panel starts after the app (an app started at login). So this tries
// again, with a growing pause, until the watcher takes it.
func stayInTray(ctx context.Context) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return // no session bus: no tray either
	}
	defer conn.Close()
	if err := conn.AddMatchSignalContext(ctx,
		dbus.WithMatchObjectPath("/org/freedesktop/DBus"),
		dbus.WithMatchInterface("org.freedesktop.DBus"),
		dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, watcherName),
	); err != nil {
		return
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	item := fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid()) // the name fyne.io/systray takes
	for {
		select {
		case <-ctx.Done():
			return
		case sig, ok := <-signals:
			if !ok {
				return
			}
			if sig.Name != "org.freedesktop.DBus.NameOwnerChanged" || len(sig.Body) < 3 {
				continue
			}
			if owner, _ := sig.Body[2].(string); owner != "" {
				registerTrayItem(ctx, conn, item)
			}
		}
	}
}

const watcherName = "org.kde.StatusNotifierWatcher"

// registerTrayItem registers item with the watcher, trying again for a
// while when the watcher is not serving yet.
func registerTrayItem(ctx context.Context, conn *dbus.Conn, item string) {
	pause := 100 * time.Millisecond
	for range 12 {
		call := conn.Object(watcherName, "/StatusNotifierWatcher").CallWithContext(ctx,
			watcherName+".RegisterStatusNotifierItem", 0, item)
		if call.Err == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}
