//go:build !((linux || freebsd || openbsd || netbsd) && !android)

package gui

import "context"

// stayInTray has nothing to do where the tray is not a StatusNotifierItem.
func stayInTray(context.Context) {}
