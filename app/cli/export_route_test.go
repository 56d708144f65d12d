package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mcptray/registry/clients"
)

// `mcptray export` takes install's route flags and prints the entries
// install writes: the one entry by default, mcptray-PROFILE with --profile,
// per server with --per-server or NAMEs, standalone ones with --direct.
func TestExportRoutesAsInstall(t *testing.T) {
	home := scratchHome(t)
	cfg := writeConfig(t, clientsConfig+"\n[profiles.work]\nservers = [\"files\"]\n")
	c, _ := clients.Lookup("cursor")
	path := filepath.Join(home, ".cursor", "mcp.json")
	installed := func() map[string][]string {
		var v struct{ MCPServers map[string]map[string]any }
		b, _ := os.ReadFile(path)
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for n, e := range v.MCPServers {
			out[n] = commandOf(e)
		}
		return out
	}
	for _, tt := range []struct {
		flags []string
		want  map[string][]string
	}{
		{nil, map[string][]string{"mcptray": {testExe, "connect", "--config", cfg}}},
		{[]string{"--profile", "work"}, map[string][]string{"mcptray-work": {testExe, "connect", "--config", cfg, "--profile", "work"}}},
		{[]string{"files"}, map[string][]string{"files": {testExe, "connect", "--config", cfg, "files"}}},
		{[]string{"--per-server"}, nil},
		{[]string{"--direct", "files"}, map[string][]string{"files": append(strings.Fields(viaCmd), "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp")}},
	} {
		args := append([]string{"export", "--client", "cursor", "--config", cfg, "--no-resolve"}, tt.flags...)
		out, errOut, code := runCLI(t, nil, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tt.flags, code, errOut)
		}
		got := map[string][]string{}
		for n, e := range exported(t, c, out) {
			got[n] = commandOf(e)
		}
		if tt.want != nil && len(got) != len(tt.want) {
			t.Errorf("export %q: %v, want %v", tt.flags, got, tt.want)
		}
		for n, cmd := range tt.want {
			if !slices.Equal(got[n], cmd) {
				t.Errorf("export %q: %s runs %q, want %q", tt.flags, n, got[n], cmd)
			}
		}
		if tt.want == nil && (len(got) != 4 || got["mcptray"] != nil) {
			t.Errorf("export %q: %v", tt.flags, got)
		}
		// install with the same flags writes the same entries.
		os.Remove(path)
		if _, errOut, code := runCLI(t, nil, append([]string{"install", "--client", "cursor", "--config", cfg, "--no-resolve"}, tt.flags...)...); code != 0 {
			t.Fatalf("install %q: exit %d: %s", tt.flags, code, errOut)
		}
		if inst := installed(); len(inst) != len(got) {
			t.Errorf("install %q wrote %v, export printed %v", tt.flags, inst, got)
		} else {
			for n, cmd := range got {
				if !slices.Equal(inst[n], cmd) {
					t.Errorf("install %q: %s runs %q, export printed %q", tt.flags, n, inst[n], cmd)
				}
			}
		}
	}

	// The same bad input as install, said the same way.
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--profile", "work", "files"}, "--profile writes the one entry mcptray-work: it takes no NAME"},
		{[]string{"--profile", "wrok"}, `no profile named "wrok"`},
		{[]string{"--url", "--direct"}, "exclude each other"},
		{[]string{"nope"}, `no server named "nope"`},
	} {
		for _, verb := range []string{"export", "install"} {
			_, errOut, code := runCLI(t, nil, append([]string{verb, "--client", "cursor", "--config", cfg}, tt.flags...)...)
			if code == 0 || !strings.Contains(errOut, tt.want) {
				t.Errorf("%s %q: exit %d, want %q: %s", verb, tt.flags, code, tt.want, errOut)
			}
		}
	}
}
