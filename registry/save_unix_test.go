//go:build unix

package registry

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A save into a folder the user cannot write fails with a clear error and
// leaves the old file as it was.
func TestSaveReadOnlyFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o755)
	path := filepath.Join(dir, "servers.toml")
	orig := []byte("[servers.x]\ncommand = \"x\"\n")
	os.WriteFile(path, orig, 0o644)
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })

	var err error
	if os.Getuid() == 0 {
		// Root ignores folder permissions: save as an unprivileged user.
		for p := dir; p != "/"; p = filepath.Dir(p) {
			if fi, e := os.Stat(p); e == nil && fi.Mode().Perm()&0o005 != 0o005 {
				os.Chmod(p, fi.Mode().Perm()|0o005)
			}
		}
		exe := filepath.Join(filepath.Dir(dir), "registry.test")
		if b, e := os.ReadFile(os.Args[0]); e != nil || os.WriteFile(exe, b, 0o755) != nil {
			t.Fatalf("copy test binary: %v", e)
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "REGISTRY_TEST_SAVE="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if runErr := cmd.Run(); runErr != nil {
			if ee, ok := runErr.(*exec.ExitError); ok && ee.ExitCode() == 1 {
				err = errors.New(stderr.String())
			} else {
				t.Fatalf("child: %v: %s", runErr, stderr.String())
			}
		}
	} else {
		cfg, _ := Load(path)
		cfg.Servers[0].Description = "changed"
		err = Save(cfg)
	}
	if err == nil {
		t.Fatal("save into a read-only folder succeeded")
	}
	if !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), path) {
		t.Errorf("error does not say what and where: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Errorf("old file changed: %q", got)
	}
}
