package supervisor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestLoginEnvironment(t *testing.T) {
	env := LoginEnvironment(context.Background())
	if envValue(env, "PATH") == "" {
		t.Fatalf("no PATH in login environment (%d entries)", len(env))
	}
	for _, kv := range env {
		if !strings.Contains(kv, "=") {
			t.Errorf("malformed entry %q", kv)
		}
		if strings.Contains(kv, "__MCPTRAY_ENV_") {
			t.Errorf("marker leaked into the environment: %q", kv)
		}
	}
	// Resolved once: a second call returns the same content.
	again := LoginEnvironment(context.Background())
	if strings.Join(env, "\x00") != strings.Join(again, "\x00") {
		t.Error("second call differs from the first")
	}
}

func TestLoginShellBanner(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no login shell on Windows")
	}
	// A shell whose rc prints a banner on stdout and whose env has a value
	// with a newline in it.
	dir := t.TempDir()
	sh := filepath.Join(dir, "noisy-sh")
	// The fake shell receives -l -i -c SCRIPT: drop the flags, run SCRIPT.
	script := "#!/bin/sh\necho 'Welcome! Last login: today'\nexport MULTI='a\nb'\nexec /bin/sh -c \"$4\"\n"
	if err := os.WriteFile(sh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHELL", sh)
	env, err := loginShellEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := envValue(env, "MULTI"); got != "a\nb" {
		t.Errorf("MULTI = %q, want %q", got, "a\nb")
	}
	if envValue(env, "PATH") == "" {
		t.Error("PATH missing")
	}
}

func TestResolveCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("exec bits are Unix")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	noexec := filepath.Join(dir, "plain")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "onlyplain"), []byte("x"), 0o644)
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + "/usr/bin:/bin"}
	tests := []struct {
		name, cmd string
		want      string
		wantErr   error
		wantFS    error
	}{
		{"bare name in PATH", "tool", exe, nil, nil},
		{"system tool", "sh", "", nil, nil},
		{"absolute", exe, exe, nil, nil},
		{"missing name", "no-such-tool-xyz", "", ErrCommandNotFound, fs.ErrNotExist},
		{"missing absolute", filepath.Join(dir, "nope"), "", ErrCommandNotFound, fs.ErrNotExist},
		{"not executable absolute", noexec, "", ErrNotExecutable, fs.ErrPermission},
		{"not executable in PATH", "onlyplain", "", ErrNotExecutable, fs.ErrPermission},
		{"a folder", dir, "", ErrNotExecutable, fs.ErrPermission},
		{"empty", "", "", ErrCommandNotFound, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveCommand(tt.cmd, env)
			if tt.wantErr != nil {
				var ce *CommandError
				if !errors.As(err, &ce) || !errors.Is(err, tt.wantErr) || !errors.Is(err, tt.wantFS) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if err.Error() == "" || !strings.Contains(err.Error(), tt.cmd) {
					t.Errorf("message %q does not name the command", err.Error())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if !filepath.IsAbs(got) {
				t.Errorf("got relative path %q", got)
			}
		})
	}
}

func TestWellKnownPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home) // the home os.UserHomeDir reads on Windows
	os.MkdirAll(filepath.Join(home, ".cargo", "bin"), 0o755)
	env := withWellKnownPath([]string{"PATH=/usr/bin", "X=1"})
	path := envValue(env, "PATH")
	if !strings.HasPrefix(path, "/usr/bin") {
		t.Errorf("PATH %q: the original entries must stay first", path)
	}
	if !strings.Contains(path, filepath.Join(home, ".cargo", "bin")) {
		t.Errorf("PATH %q lacks ~/.cargo/bin", path)
	}
	if strings.Contains(path, filepath.Join(home, ".volta", "bin")) {
		t.Errorf("PATH %q holds a folder that does not exist", path)
	}
}
