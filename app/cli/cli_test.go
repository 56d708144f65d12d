package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mcptray/app"
)

// TestGlobalConfigFlag: --config before the command is the command's own.
func TestGlobalConfigFlag(t *testing.T) {
	cfg := writeConfig(t, "[servers.here]\ncommand = \"true\"\n")
	for _, args := range [][]string{
		{"--config", cfg, "config", "list"},
		{"--config=" + cfg, "config", "list"},
		{"-config", cfg, "config", "list"},
	} {
		out, errOut, code := runCLI(t, nil, args...)
		if code != 0 || !strings.Contains(out, "here") {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// The command's own --config wins over the one before it.
	other := writeConfig(t, "[servers.there]\ncommand = \"true\"\n")
	if out, _, code := runCLI(t, nil, "--config", cfg, "config", "list", "--config", other); code != 0 || !strings.Contains(out, "\nthere ") || strings.Contains(out, "\nhere ") {
		t.Errorf("own --config: exit %d\n%s", code, out)
	}
	for args, want := range map[string]string{
		"--config":                  "--config needs a file",
		"--config= config list":     "--config needs a file",
		"--config " + cfg + " logs": "--config given before the command, but this command has no such flag",
	} {
		_, errOut, code := runCLI(t, nil, strings.Fields(args)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", args, code, want, errOut)
		}
	}
}

// TestGlobalConfigStartsTheApp: `mcptray --config FILE` starts the desktop
// app with that file, as `mcptray gui --config FILE` does; the headless
// build (no desktop app) says how to get one and fails.
func TestGlobalConfigStartsTheApp(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "servers.toml")
	for _, args := range [][]string{{"--config", cfg}, {"gui", "--config", cfg}, {"--config=" + cfg, "gui", "--hide"}} {
		var got []string
		var out, errb strings.Builder
		code := Main(args, &app.Env{Stdout: &out, Stderr: &errb, Desktop: func(a []string, _ *app.Env) int {
			got = a
			return 0
		}})
		want := []string{"--config", cfg}
		if slices.Contains(args, "--hide") {
			want = append(want, "--hide")
		}
		if code != 0 || !slices.Equal(got, want) {
			t.Errorf("mcptray %q: exit %d, the desktop app got %q, want %q\n%s", args, code, got, want, errb.String())
		}
	}
	var errb strings.Builder
	if code := Main([]string{"--config", cfg}, &app.Env{Stdout: &errb, Stderr: &errb}); code != 1 ||
		!strings.Contains(errb.String(), "headless build (-tags nogui): it has no desktop app") {
		t.Errorf("headless: exit %d\n%s", code, errb.String())
	}
}
