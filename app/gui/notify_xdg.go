//go:build (linux || freebsd || openbsd || netbsd) && !android

package gui

import (
	"os"
	"path/filepath"
	"sync"

	"fyne.io/fyne/v2"
	"github.com/godbus/dbus/v5"

	"mcptray/assets"
)

// desktopNotifier sends notices to the session's notification service
// (org.freedesktop.Notifications) itself: Fyne's sends each as a new,
// sticky one (expire_timeout 0, replaces_id 0) under the app's ID. Here each
// expires, replaces the server's one before it, and comes from "mcptray".
// Without a session bus it falls back to Fyne.
func desktopNotifier(a fyne.App) func(notice) {
	conn, err := dbus.SessionBus() // shared with Fyne's tray: not closed
	if err != nil {
		return fyneNotifier(a)
	}
	var mu sync.Mutex // guards ids; serialises the calls, in order
	ids := map[string]uint32{}
	icon := notificationIcon()
	return func(n notice) {
		go func() {
			mu.Lock()
			defer mu.Unlock()
			obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
			var id uint32
			err := obj.Call("org.freedesktop.Notifications.Notify", 0, "mcptray", ids[n.server], icon,
				n.title, n.body, []string{}, map[string]dbus.Variant{}, int32(n.expire.Milliseconds())).Store(&id)
			if err != nil {
				fyne.LogError("desktop notification", err)
				return
			}
			if n.server != "" {
				ids[n.server] = id
			}
		}()
	}
}

// notificationIcon is a file holding the app's icon, for the notification
// service to show ("" when it cannot be written).
func notificationIcon() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	path := filepath.Join(dir, "mcptray", "notification-icon.png")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil || os.WriteFile(path, assets.AppIcon.Content(), 0o600) != nil {
		return ""
	}
	return path
}
