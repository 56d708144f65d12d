package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"mcptray/app"
	"mcptray/app/clidoc"
)

// bashComplete sources script in a real bash and completes words (the last
// one being typed), as bash-completion would.
func bashComplete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH to source the completion script in")
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	sh := `source "$1"; COMP_WORDS=(` + strings.Join(quoted, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _mcptray; printf '%s\n' "${COMPREPLY[@]}"`
	out, err := exec.Command("bash", "-c", sh, "bash", script).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestCompletionFollowsCommandTable: `mcptray completion bash` offers what
// the command table has, at every level, with each command's own flags.
func TestCompletionFollowsCommandTable(t *testing.T) {
	out, errs, code := runCLI(t, nil, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d: %s", code, errs)
	}
	script := filepath.Join(t.TempDir(), "mcptray.bash")
	os.WriteFile(script, []byte(out), 0o644)

	var top []string
	for _, c := range commands {
		if !c.hidden {
			top = append(top, c.name)
		}
	}
	if got := bashComplete(t, script, "mcptray", ""); !slices.Equal(got, top) {
		t.Errorf("mcptray <TAB>: %v, want %v", got, top)
	}
	if got := bashComplete(t, script, "mcptray", "--config", "x.toml", "config", "l"); !slices.Equal(got, []string{"list"}) {
		t.Errorf("mcptray --config x.toml config l<TAB>: %v", got)
	}
	got := bashComplete(t, script, "mcptray", "check", "demo", "--")
	for _, want := range []string{"--json", "--timeout", "--config", "--help"} {
		if !slices.Contains(got, want) {
			t.Errorf("mcptray check demo --<TAB>: %v, want %s among them", got, want)
		}
	}
	if slices.Contains(got, "--show-secrets") {
		t.Errorf("mcptray check --<TAB> offers another command's flag: %v", got)
	}

	for _, shell := range []string{"zsh", "fish"} {
		out, errs, code := runCLI(t, nil, "completion", shell)
		if code != 0 || !strings.Contains(out, "'check") || !strings.Contains(out, "--json") && !strings.Contains(out, "'json'") {
			t.Errorf("completion %s: exit %d, %s\n%s", shell, code, errs, out)
		}
	}
	if _, errs, code := runCLI(t, nil, "completion", "tcsh"); code != 2 || !strings.Contains(errs, `unknown shell "tcsh": bash, zsh or fish`) {
		t.Errorf("completion tcsh: exit %d, %s", code, errs)
	}
}

// TestZshCompletionParses: zsh reads the function it is given (zsh is
// installed by make test).
func TestZshCompletionParses(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		// Windows has no zsh to install: the script is for Unix shells.
		if os.Getenv("CI") == "true" && runtime.GOOS != "windows" {
			t.Fatal("zsh not installed (make test installs it)")
		}
		t.Skip("no zsh on PATH to parse the completion script in")
	}
	out, _, _ := runCLI(t, nil, "completion", "zsh")
	p := filepath.Join(t.TempDir(), "_mcptray")
	os.WriteFile(p, []byte(out), 0o644)
	if b, err := exec.Command("zsh", "-n", p).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, b)
	}
}

// TestManPagesFromCommandTable: one page per command, each with every flag
// --help lists, and groff formats every page without a warning.
func TestManPagesFromCommandTable(t *testing.T) {
	pages := clidoc.Man(clidoc.ManInfo{Prog: "mcptray", Version: "1.2.3", Date: "2026-12-01", Summary: "run MCP servers", Description: "Paragraph one.\n\nTwo:\n  indented\n.dot"}, Commands())
	byName := map[string]string{}
	for _, p := range pages {
		byName[p.Name] = p.Text
	}
	for _, c := range Commands() {
		text, ok := byName["mcptray-"+c.Name+".1"]
		if !ok {
			t.Errorf("no man page for %s", c.Name)
			continue
		}
		for _, f := range c.Flags {
			if !strings.Contains(text, `\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)) {
				t.Errorf("mcptray-%s.1 lacks --%s", c.Name, f.Name)
			}
		}
		if !strings.Contains(byName["mcptray.1"], ".BR mcptray\\-"+strings.ReplaceAll(c.Name, "-", `\-`)+" (1)") {
			t.Errorf("mcptray.1 does not list %s", c.Name)
		}
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("no groff on PATH to render the man pages with")
	}
	for _, p := range pages {
		cmd := exec.Command("groff", "-man", "-ww", "-z", "-Tutf8")
		cmd.Stdin = strings.NewReader(p.Text)
		if b, err := cmd.CombinedOutput(); err != nil || len(b) > 0 {
			t.Errorf("groff on %s: %v\n%s", p.Name, err, b)
		}
	}
}

// TestVersionJSON: version --json says which build this is.
func TestVersionJSON(t *testing.T) {
	var out strings.Builder
	e := &app.Env{Stdout: &out, Stderr: &out, LookupEnv: func(string) (string, bool) { return "", false }}
	if code := run(context.Background(), []string{"version", "--json"}, e); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), `"version": "`+app.Version+`"`) || !strings.Contains(out.String(), `"build": "headless"`) {
		t.Errorf("version --json:\n%s", out.String())
	}
}
