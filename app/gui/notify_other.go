//go:build !((linux || freebsd || openbsd || netbsd) && !android)

package gui

import "fyne.io/fyne/v2"

// desktopNotifier is Fyne's notifications where the session has no
// org.freedesktop.Notifications.
func desktopNotifier(a fyne.App) func(notice) { return fyneNotifier(a) }
