package control

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"mcptray/registry"
	"mcptray/registry/tooltrust"
)

// TestReloadAppliesApproveNewServers: a reload turns [settings]
// approve_new_servers on and off in the trust store the gateway uses.
func TestReloadAppliesApproveNewServers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "servers.toml")
	st, err := tooltrust.Open(tooltrust.PathFor(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLocal(&registry.Config{Path: path}, &LocalOptions{NoWatch: true, Trust: st})
	for _, on := range []bool{true, false} {
		text := "[settings]\napprove_new_servers = false\n"
		if on {
			text = "[settings]\napprove_new_servers = true\n"
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st.HoldsNewServers() != on {
			t.Fatalf("after a reload with approve_new_servers = %v the store holds new servers: %v", on, st.HoldsNewServers())
		}
	}
}
