package registry

import (
	"bytes"
	"errors"
	"fmt"
	"mcptray/internal/filemode"
	"mcptray/internal/wine"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// A servers.toml (or a client's file) that is a link into a dotfiles
// repository stays a link: the file it points at, through every level of
// links, is written, and keeps its mode (narrowed to 0600 for our config).
func TestSaveThroughSymlinks(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, "dotfiles", "mcptray", "servers.toml")
	writeFile(t, real, "# mine\n[servers.x]\ncommand = \"x\"\n", 0o644)
	cfgDir := filepath.Join(home, ".config", "mcptray")
	os.MkdirAll(cfgDir, 0o755)
	// servers.toml -> ../../dotfiles-link/mcptray/servers.toml, where
	// dotfiles-link -> dotfiles: two levels, relative, through a folder link.
	wine.Symlink(t, "dotfiles", filepath.Join(home, "dotfiles-link"))
	link := filepath.Join(cfgDir, "servers.toml")
	wine.Symlink(t, "../../dotfiles-link/mcptray/servers.toml", link)

	cfg, err := Load(link)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Servers = append(cfg.Servers, &Server{Name: "y", Command: "y", Autostart: true})
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("servers.toml is no longer a symbolic link: %v %v", fi.Mode(), err)
	}
	if got := readString(t, real); !strings.HasPrefix(got, "# mine\n") || !strings.Contains(got, "[servers.y]") {
		t.Errorf("the linked file was not written:\n%s", got)
	}
	if m := mode(t, real); !filemode.Matches(m, 0o600) {
		t.Errorf("linked servers.toml mode = %v, want 0600", m)
	}
	if got := readString(t, link+".bak"); got != "# mine\n[servers.x]\ncommand = \"x\"\n" {
		t.Errorf("backup = %q", got)
	}

	// A client's file keeps its mode.
	clientReal := filepath.Join(home, "dotfiles", "claude.json")
	writeFile(t, clientReal, "{}\n", 0o644)
	clientLink := filepath.Join(home, ".claude.json")
	wine.Symlink(t, clientReal, clientLink)
	if err := WriteFileAtomic(clientLink, []byte("{\"a\": 1}\n"), &WriteOptions{Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(clientLink); fi.Mode()&os.ModeSymlink == 0 {
		t.Error(".claude.json is no longer a symbolic link")
	}
	if got := readString(t, clientReal); got != "{\"a\": 1}\n" {
		t.Errorf("linked client file = %q", got)
	}
	if m := mode(t, clientReal); !filemode.Matches(m, 0o644) {
		t.Errorf("client file mode = %v, want 0644 kept", m)
	}

	// A link to a file not written yet creates that file.
	dangling := filepath.Join(home, ".gemini-settings.json")
	wine.Symlink(t, filepath.Join(home, "dotfiles", "new", "settings.json"), dangling)
	if err := WriteFileAtomic(dangling, []byte("{}\n"), nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(dangling); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("a dangling link was replaced")
	}
	if got := readString(t, filepath.Join(home, "dotfiles", "new", "settings.json")); got != "{}\n" {
		t.Errorf("link target = %q", got)
	}
}

func TestSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	wine.Symlink(t, b, a)
	wine.Symlink(t, a, b)
	err := WriteFileAtomic(a, []byte("x"), nil)
	if err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("err = %v", err)
	}
}

// A client file its owner made read-only is refused, not replaced.
func TestWriteRefusesReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, "{}\n", 0o444)
	err := WriteFileAtomic(path, []byte("{\"changed\": true}\n"), &WriteOptions{Perm: 0o600})
	if err == nil {
		t.Fatal("a read-only file was replaced")
	}
	if !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), path) {
		t.Errorf("error does not say what and where: %v", err)
	}
	if got := readString(t, path); got != "{}\n" {
		t.Errorf("file changed: %q", got)
	}
}

// A CRLF file keeps CRLF on every line, those the editor wrote included.
func TestSaveKeepsCRLF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	writeFile(t, path, "# mine\r\n[servers.x]\r\ncommand = \"x\"\r\n", 0o600)
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Servers = append(cfg.Servers, &Server{Name: "y", Command: "y", Args: []string{"a"}, Autostart: true})
	cfg.Servers[0].Description = "changed"
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	got := readString(t, path)
	if n, crlf := strings.Count(got, "\n"), strings.Count(got, "\r\n"); n != crlf || n < 6 {
		t.Errorf("line endings mixed (%d LF, %d CRLF):\n%q", n, crlf, got)
	}
	again, err := Load(path)
	if err != nil || len(again.Servers) != 2 || again.Servers[0].Description != "changed" || len(again.Diagnostics) > 0 {
		t.Errorf("reload: %v %+v", err, again)
	}
}

func TestMatchLineEndings(t *testing.T) {
	for _, tt := range []struct{ old, next, want string }{
		{"a\r\nb\r\n", "a\r\nb\r\nc\n", "a\r\nb\r\nc\r\n"},
		{"a\nb\n", "a\nb\nc\n", "a\nb\nc\n"},
		{"", "a\n", "a\n"},
		{"a\r\nb\r\nc\n", "x\ny\r\n", "x\r\ny\r\n"}, // mostly CRLF
		{"a\r\nb\nc\n", "x\r\ny\n", "x\r\ny\n"},     // mostly LF: left as written
	} {
		if got := string(MatchLineEndings([]byte(tt.old), []byte(tt.next))); got != tt.want {
			t.Errorf("MatchLineEndings(%q, %q) = %q, want %q", tt.old, tt.next, got, tt.want)
		}
	}
}

// Timestamped backups are pruned: the oldest (the file before mcptray first
// changed it) and the newest four stay.
func TestStampedBackupsPruned(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	writeFile(t, path, "v0\n", 0o600)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := 1; i <= 9; i++ {
		if i != 5 { // two in the same second
			clock = clock.Add(time.Minute)
		}
		e, err := EditFile(path, &WriteOptions{Backup: path + ".mcptray-backup", Stamp: func() time.Time { return clock }},
			func([]byte) ([]byte, error) { return fmt.Appendf(nil, "v%d\n", i), nil })
		if err != nil {
			t.Fatal(err)
		}
		if got := readString(t, e.Backup); got != fmt.Sprintf("v%d\n", i-1) {
			t.Errorf("backup %d = %q", i, got)
		}
	}
	backups, _ := filepath.Glob(path + ".mcptray-backup-*")
	var contents []string
	for _, b := range backups {
		contents = append(contents, strings.TrimSpace(readString(t, b)))
	}
	slices.Sort(contents)
	if got := strings.Join(contents, " "); got != "v0 v5 v6 v7 v8" {
		t.Errorf("backups kept: %s, want the oldest (v0) and the newest four (v5-v8)", got)
	}
}

// Another program (the client itself) writing the file between mcptray's
// read and its rename: the change is made again on what it wrote, and
// when it keeps writing, nothing is written.
func TestEditRedoneOnConcurrentChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, "a\n", 0o600)
	writes := 1
	hookBeforeRename = func(string) {
		if writes > 0 {
			writes--
			os.WriteFile(path, fmt.Appendf(nil, "a\nfrom the client %d\n", writes), 0o600)
		}
	}
	t.Cleanup(func() { hookBeforeRename = nil })
	calls := 0
	add := func(old []byte) ([]byte, error) {
		calls++
		return append(bytes.Clone(old), "from mcptray\n"...), nil
	}
	e, err := EditFile(path, &WriteOptions{Backup: path + ".bak"}, add)
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "a\nfrom the client 0\nfrom mcptray\n" || calls != 2 {
		t.Errorf("after %d calls: %q", calls, got)
	}
	if string(e.Old) != "a\nfrom the client 0\n" || readString(t, path+".bak") != "a\nfrom the client 0\n" {
		t.Errorf("old %q, backup %q", e.Old, readString(t, path+".bak"))
	}

	writes = 100
	_, err = EditFile(path, nil, add)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want ErrChanged naming the file", err)
	}
	if got := readString(t, path); got != fmt.Sprintf("a\nfrom the client %d\n", writes) {
		t.Errorf("file = %q, want the other program's last write", got)
	}
}

// servers.toml changed on disk after it was loaded: the save applies its own
// change to what is there; a server changed on both sides is refused.
func TestSaveRebasesOnConcurrentChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	writeFile(t, path, "# mine\n[servers.a]\ncommand = \"a\"\n\n[servers.b]\ncommand = \"b\"\n", 0o600)
	cfg, _ := Load(path)
	stale, _ := Load(path)

	// Someone else adds c and changes b.
	other, _ := Load(path)
	other.Servers = append(other.Servers, &Server{Name: "c", Command: "c", Autostart: true})
	other.Server("b").Args = []string{"new"}
	if err := Save(other); err != nil {
		t.Fatal(err)
	}

	// This one adds d, changes a and removes nothing: all of it survives.
	cfg.Server("a").Description = "edited"
	cfg.Servers = append(cfg.Servers, &Server{Name: "d", Command: "d", Autostart: true})
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	got, _ := Load(path)
	var names []string
	for _, s := range got.Servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "a,b,c,d" || got.Server("a").Description != "edited" ||
		strings.Join(got.Server("b").Args, " ") != "new" || !strings.HasPrefix(readString(t, path), "# mine\n") {
		t.Errorf("merged file:\n%s", readString(t, path))
	}
	if len(cfg.Servers) != 4 {
		t.Errorf("cfg after save has %d servers, want what the file holds", len(cfg.Servers))
	}

	// A change to b made on the stale copy conflicts with the other's.
	stale.Server("b").Description = "stale"
	before := readString(t, path)
	err := Save(stale)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("err = %v, want a conflict on b", err)
	}
	if readString(t, path) != before {
		t.Error("a refused save changed the file")
	}
}

// 20 mcptray processes each adding a different server to one servers.toml
// at once: all 20 are there afterwards.
func TestConcurrentSavesFromProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	writeFile(t, path, "# shared\n[servers.first]\ncommand = \"x\"\n", 0o600)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "REGISTRY_TEST_ADD="+path, fmt.Sprintf("REGISTRY_TEST_ADD_NAME=s%02d", i))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("process %d: %v: %s", i, err, out)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != n+1 || len(cfg.Diagnostics) > 0 {
		t.Fatalf("%d servers after %d concurrent saves (%v):\n%s", len(cfg.Servers), n, cfg.Diagnostics, readString(t, path))
	}
	for i := range n {
		if cfg.Server(fmt.Sprintf("s%02d", i)) == nil {
			t.Errorf("s%02d lost", i)
		}
	}
}

// import --dry-run and import into a config that does not exist yet:
// OpenForUpdate writes nothing; the first Save writes the default config
// with its comments, plus the change.
func TestOpenForUpdateWritesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, loc := range []Location{
		{Path: filepath.Join(dir, "default", "mcptray", "servers.toml"), Source: "default"},
		{Path: filepath.Join(dir, "explicit.toml"), Explicit: true, Source: "--config"},
	} {
		cfg, err := OpenForUpdate(loc, "/usr/bin/mcptray")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(loc.Path); !os.IsNotExist(err) {
			t.Errorf("%s: OpenForUpdate created the file", loc.Source)
		}
		if cfg.Saved() != nil || cfg.Server("demo") == nil {
			t.Errorf("%s: Saved() = %q, servers %v", loc.Source, cfg.Saved(), cfg.Servers)
		}
		cfg.Servers = append(cfg.Servers, &Server{Name: "imported", URL: "https://e.com/mcp", Autostart: true})
		if err := Save(cfg); err != nil {
			t.Fatal(err)
		}
		got := readString(t, loc.Path)
		if !strings.HasPrefix(got, "# mcptray: the MCP servers") || !strings.Contains(got, "[servers.imported]") {
			t.Errorf("%s: created file:\n%s", loc.Source, got)
		}
		if _, err := os.Stat(loc.Path + ".bak"); !os.IsNotExist(err) {
			t.Errorf("%s: a backup of nothing was written", loc.Source)
		}
		if m := mode(t, loc.Path); !filemode.Matches(m, 0o600) {
			t.Errorf("mode %v", m)
		}
	}
}

// A write that fails (as on a full disk; injected here at the write of each
// temporary file in turn, so that it runs without root) leaves the file and
// the previous backup as they were, and no backup or temporary file of its
// own. TestSaveFullDiskKeepsFileAndBackup does the same on a real full disk.
func TestFailedWriteLeavesFileAndBackups(t *testing.T) {
	for _, failing := range []string{"the file", "the backup"} {
		for _, stamped := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stamped=%v", failing, stamped), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "settings.json")
				writeFile(t, path, "{}\n", 0o600)
				opts := &WriteOptions{Backup: path + ".bak"}
				if stamped {
					opts = &WriteOptions{Backup: path + ".mcptray-backup", Stamp: time.Now}
				} else {
					writeFile(t, path+".bak", "the previous backup\n", 0o600)
				}
				hookWrite = func(p string) error {
					if (p == path) == (failing == "the file") {
						return errors.New("no space left on device (injected)")
					}
					return nil
				}
				t.Cleanup(func() { hookWrite = nil })
				err := WriteFileAtomic(path, []byte("{\"new\": true}\n"), opts)
				if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v", err)
				}
				entries, _ := os.ReadDir(dir)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				want := "settings.json settings.json.bak"
				if stamped {
					want = "settings.json"
				}
				if strings.Join(names, " ") != want {
					t.Errorf("files: %v, want %s", names, want)
				}
				if readString(t, path) != "{}\n" || !stamped && readString(t, path+".bak") != "the previous backup\n" {
					t.Error("the file or the previous backup changed")
				}
			})
		}
	}
}

// After a save, the config is what the file holds: saving it again writes
// nothing new and takes no other path.
func TestSaveTwiceFromOneConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	writeFile(t, path, "[servers.x]\r\ncommand = \"x\"\r\n", 0o600)
	cfg, _ := Load(path)
	cfg.Servers = append(cfg.Servers, &Server{Name: "y", Command: "y", Autostart: true})
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	first := readString(t, path)
	if string(cfg.Saved()) != first {
		t.Errorf("cfg.Saved() is not the file:\n%q\n%q", cfg.Saved(), first)
	}
	cfg.Servers = cfg.Servers[:1]
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "[servers.x]\r\ncommand = \"x\"\r\n" {
		t.Errorf("after removing y again: %q", got)
	}
}
