package app

func systemOpener(url string) []string {
	return []string{"rundll32", "url.dll,FileProtocolHandler", url}
}
