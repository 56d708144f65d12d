//go:build !darwin && !windows

package app

func systemOpener(url string) []string { return []string{"xdg-open", url} }
