package app

func systemOpener(url string) []string { return []string{"open", url} }
