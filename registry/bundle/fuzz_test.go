package bundle

import (
	"strings"
	"testing"
)

// FuzzParseManifest: any bytes give a manifest or an error, never a panic,
// and an accepted manifest's entry point and name stay inside the folder.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"manifest_version":"0.3","name":"x","version":"1","description":"d","author":{"name":"a"},"server":{"type":"node","entry_point":"s.js","mcp_config":{"command":"node","args":["${__dirname}/s.js","${user_config.k}"]}},"user_config":{"k":{"type":"string","title":"K","description":"k","default":"v"}}}`))
	f.Add([]byte(`{"dxt_version":"0.1","name":"..","version":"1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest("fuzz.mcpb", data)
		if err != nil {
			return
		}
		rel, err := cleanRel(m.Server.EntryPoint)
		if err != nil || strings.HasPrefix(rel, "../") || rel == ".." {
			t.Fatalf("accepted entry point %q", m.Server.EntryPoint)
		}
		if !safeElem(m.Name) || !safeElem(m.Version) {
			t.Fatalf("accepted name %q version %q", m.Name, m.Version)
		}
	})
}

// FuzzCleanRel: a path cleanRel accepts never climbs out.
func FuzzCleanRel(f *testing.F) {
	for _, s := range []string{"a/b", "../x", `a\..\..\x`, "/etc", "C:/x", "a/./b/../c", "a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		rel, err := cleanRel(name)
		if err != nil {
			return
		}
		if rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") || strings.Contains(rel, `\`) {
			t.Fatalf("cleanRel(%q) = %q", name, rel)
		}
	})
}
