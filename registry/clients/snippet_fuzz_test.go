package clients

import "testing"

// FuzzParseSnippet: any pasted text gives servers or an error, never a
// panic, and every server it gives is valid.
func FuzzParseSnippet(f *testing.F) {
	for _, s := range []string{`{"mcpServers":{"a":{"command":"npx","args":["-y","x"]}}}`, `"a": {"url": "https://x"}`,
		"[mcp_servers.a]\ncommand = \"x\"\n", "A=1 npx -y 'p q' \"r\\\"s\"", "https://mcp.example.com/mcp", "docker run -i --rm -e X img:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		im, err := ParseSnippet(text)
		if err != nil {
			return
		}
		for _, s := range im.Servers {
			if err := s.Validate(); err != nil {
				t.Fatalf("%q gave an invalid server %+v: %v", text, s, err)
			}
		}
	})
}
