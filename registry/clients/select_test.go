package clients

import (
	"errors"
	"slices"
	"testing"

	"mcptray/registry"
)

func TestSelect(t *testing.T) {
	cfg, err := registry.Parse("servers.toml", []byte(`
[servers.a]
command = "a"
[servers.off]
command = "b"
disabled = true
[servers.bad]
command = "c"
restart = "sometimes"
[servers.d]
url = "https://d.example/mcp"
`))
	if err != nil {
		t.Fatal(err)
	}
	names := func(ss []*registry.Server) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	got, skipped, err := Select(cfg, nil)
	if err != nil || !slices.Equal(names(got), []string{"a", "d"}) || len(skipped) != 2 || skipped[0].Name != "off" || skipped[1].Invalid == nil {
		t.Errorf("all: %v %v %v", names(got), skipped, err)
	}
	got, _, err = Select(cfg, []string{"off", "a"})
	if err != nil || !slices.Equal(names(got), []string{"a", "off"}) {
		t.Errorf("named: %v %v", names(got), err)
	}
	if _, _, err := Select(cfg, []string{"bad"}); err == nil {
		t.Error("a named invalid server was accepted")
	}
	var ue *UnknownServerError
	if _, _, err := Select(cfg, []string{"nope"}); !errors.As(err, &ue) || ue.Name != "nope" {
		t.Errorf("unknown: %v", err)
	}
	empty, _ := registry.Parse("servers.toml", []byte("[servers.x]\ncommand = \"x\"\ndisabled = true\n"))
	if _, _, err := Select(empty, nil); !errors.Is(err, ErrNoServers) {
		t.Errorf("nothing: %v", err)
	}
}

func TestRender(t *testing.T) {
	c, _ := Lookup("claude-code")
	if got := c.Outputs(); !slices.Equal(got, []Output{OutputSnippet, OutputCLI}) {
		t.Errorf("outputs %v", got)
	}
	for _, o := range c.Outputs() {
		if _, err := c.Render(o, testServers(), installOpts()); err != nil {
			t.Errorf("%s: %v", o, err)
		}
	}
	if _, err := c.Render(OutputDeepLink, testServers(), installOpts()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("deeplink: %v", err)
	}
}
