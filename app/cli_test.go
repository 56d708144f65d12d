//go:build unix

package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
// app with that file.
func TestGlobalConfigStartsTheApp(t *testing.T) {
	bin := mcptrayBinary(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "mcptray")
	if err := os.Link(bin, exe); err != nil {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		writeFileMode(t, exe, data, 0o755)
	}
	got := filepath.Join(dir, "gui-args")
	writeFileMode(t, filepath.Join(dir, "mcptray-gui"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+got+"\n"), 0o755)
	cfg := filepath.Join(dir, "servers.toml")
	out, err := exec.Command(exe, "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("mcptray --config FILE: %v\n%s", err, out)
	}
	args, err := os.ReadFile(got)
	if err != nil || string(args) != "--config\n"+cfg+"\n" {
		t.Errorf("the desktop app got %q (%v), want --config %s", args, err, cfg)
	}
}

func writeFileMode(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}
