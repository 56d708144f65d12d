package secrets

import (
	"errors"
	"fmt"
	"mcptray/internal/filemode"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	st := &FileStore{Path: filepath.Join(dir, "data", "mcptray", "secrets.json")}
	if _, err := st.Get("secret:a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on a missing file: %v, want ErrNotFound", err)
	}
	for k, v := range map[string]string{"secret:a": "one", "secret:b": "two\nlines", "oauth:https://x.example/mcp": `{"t":1}`} {
		if err := st.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := st.Get("secret:b"); err != nil || v != "two\nlines" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	keys, err := st.List(SecretPrefix)
	if err != nil || !slices.Equal(keys, []string{"secret:a", "secret:b"}) {
		t.Fatalf("List = %v, %v", keys, err)
	}
	fi, err := os.Stat(st.Path)
	if err != nil || !filemode.Matches(fi.Mode(), 0o600) {
		t.Fatalf("file mode %v, %v; want 0600", fi.Mode(), err)
	}
	di, _ := os.Stat(filepath.Dir(st.Path))
	if !filemode.Matches(di.Mode(), 0o700) {
		t.Fatalf("folder mode %v, want 0700", di.Mode())
	}
	if err := st.Delete("secret:a"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete("secret:a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v", err)
	}
	if keys, _ := st.List(""); !slices.Equal(keys, []string{"oauth:https://x.example/mcp", "secret:b"}) {
		t.Fatalf("List after Delete = %v", keys)
	}

	// A file others can read is refused rather than used (where files
	// have such bits: on Windows its ACL decides, and Chmod sets only the
	// read-only attribute).
	if runtime.GOOS != "windows" {
		os.Chmod(st.Path, 0o644)
		if _, err := st.Get("secret:b"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("Get on a 0644 file: %v", err)
		}
		os.Chmod(st.Path, 0o600)
	}
	// A damaged file says so and is left alone.
	os.WriteFile(st.Path, []byte("{not json"), 0o600)
	if err := st.Set("secret:c", "x"); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Set on a damaged file: %v", err)
	}
	if b, _ := os.ReadFile(st.Path); string(b) != "{not json" {
		t.Fatalf("the damaged file was overwritten: %q", b)
	}
}

func TestOpenChooses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("the automatic choice falls back to the file only without a Linux session bus; %s's keyring is always there", runtime.GOOS)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "secrets.json")
	// No session bus at all: the automatic choice is the file, said once.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(dir, "no-bus"))
	var notices []string
	st, err := Open(&Options{File: file, Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*FileStore); !ok || len(notices) != 1 || !strings.Contains(notices[0], file) {
		t.Fatalf("auto without a keyring: %T, notices %q", st, notices)
	}
	if err := st.Set("secret:x", "1"); err != nil {
		t.Fatal(err)
	}
	// Once the file exists it stays the store, without a word.
	notices = nil
	st, err = Open(&Options{File: file, Notice: func(s string) { notices = append(notices, s) }})
	if _, ok := st.(*FileStore); err != nil || !ok || len(notices) != 0 {
		t.Fatalf("auto with a file store: %T, %v, %q", st, err, notices)
	}
	if _, err := Open(&Options{Kind: "keyring", File: file}); err == nil || !strings.Contains(err.Error(), "keyring") {
		t.Fatalf("Kind keyring without one: %v", err)
	}
	if _, err := Open(&Options{Kind: "vault", File: file}); err == nil || !strings.Contains(err.Error(), "keyring, file or auto") {
		t.Fatalf("unknown kind: %v", err)
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"GITHUB_TOKEN", "a.b-c", "x1"} {
		if err := ValidName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a}", "${x}", strings.Repeat("a", 129)} {
		if ValidName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestOSKeyring stores, lists and removes through a real Secret Service
// (gnome-keyring) on a private session bus, in a child process so the
// D-Bus connection is that bus's.
func TestOSKeyring(t *testing.T) {
	if os.Getenv("MCPTRAY_KEYRING_CHILD") == "1" {
		keyringChild(t)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skipf("the Secret Service over D-Bus is Linux's keyring, not %s's", runtime.GOOS)
	}
	for _, tool := range []string{"dbus-daemon", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; make test installs it (packaging/ensure-deps.sh)", tool)
			}
			t.Skipf("%s is missing (make test installs it)", tool)
		}
	}
	addr, stop := privateSessionBus(t)
	defer stop()
	home := t.TempDir()
	env := append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+addr, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_RUNTIME_DIR="+home, "GNOME_KEYRING_CONTROL="+home)
	// --login creates and unlocks the login keyring from the password on
	// stdin; --start then serves the Secret Service on the bus. Both leave
	// with the bus (stop).
	for _, args := range [][]string{{"--login"}, {"--start", "--components=secrets"}} {
		gk := exec.Command("gnome-keyring-daemon", args...)
		gk.Env = env
		gk.Stdin = strings.NewReader("test-password")
		if out, err := gk.CombinedOutput(); err != nil {
			t.Fatalf("gnome-keyring-daemon %v: %v\n%s", args, err, out)
		}
	}
	child := exec.Command(os.Args[0], "-test.run=^TestOSKeyring$", "-test.v")
	child.Env = append(env, "MCPTRAY_KEYRING_CHILD=1")
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "keyring child ok") {
		t.Fatalf("keyring child: %v\n%s", err, out)
	}
}

func keyringChild(t *testing.T) {
	// The daemon takes a moment to claim its name on the bus.
	var st Store
	var err error
	for i := 0; i < 100; i++ {
		if st, err = Open(&Options{Kind: "keyring"}); err == nil {
			break
		}
		waitABit()
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Where(), "keyring") {
		t.Fatalf("Where = %q", st.Where())
	}
	if err := st.Set(SecretKey("tok"), "s3cret"); err != nil {
		t.Fatal(err)
	}
	if err := st.Set(TokenKey("https://a.example/mcp"), `{"x":1}`); err != nil {
		t.Fatal(err)
	}
	if v, err := st.Get(SecretKey("tok")); err != nil || v != "s3cret" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if keys, err := st.List(SecretPrefix); err != nil || !slices.Equal(keys, []string{"secret:tok"}) {
		t.Fatalf("List = %v, %v", keys, err)
	}
	if err := st.Delete(SecretKey("tok")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(SecretKey("tok")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if keys, _ := st.List(""); !slices.Equal(keys, []string{"oauth:https://a.example/mcp"}) {
		t.Fatalf("List after Delete = %v", keys)
	}
	// The automatic choice takes the keyring when it answers.
	if st, err := Open(&Options{File: filepath.Join(t.TempDir(), "s.json")}); err != nil || !strings.Contains(st.Where(), "keyring") {
		t.Fatalf("auto with a keyring: %v, %v", st, err)
	}
	t.Log("keyring child ok")
}

// TestFileStoreConcurrentWriters: 20 writers at once (the app refreshing a
// token while commands store secrets) lose nothing.
func TestFileStoreConcurrentWriters(t *testing.T) {
	st := &FileStore{Path: filepath.Join(t.TempDir(), "secrets.json")}
	errs := make(chan error, 20)
	for i := range 20 {
		go func() { errs <- st.Set(SecretKey(fmt.Sprintf("k%02d", i)), "v") }()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if keys, err := st.List(SecretPrefix); err != nil || len(keys) != 20 {
		t.Fatalf("%d keys after 20 concurrent writers (%v): %v", len(keys), err, keys)
	}
}
