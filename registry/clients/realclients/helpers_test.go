package realclients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mcptray/internal/wine"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/demo"
)

// probeArg makes the test binary an MCP server (the demo server) that first
// records the environment variables it was started with: how a client
// resolved the env references it was given.
const probeArg = "mcptray-realclients-probe"

// probeVars are the variables the probe records.
var probeVars = []string{"MCPTRAY_RC_KEY", "PROBE_RENAMED", "PROBE_LITERAL"}

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == probeArg {
		os.Exit(serveProbe(os.Args[2]))
	}
	os.Exit(m.Run())
}

func serveProbe(out string) int {
	seen := map[string]*string{}
	for _, k := range probeVars {
		if v, ok := os.LookupEnv(k); ok {
			seen[k] = &v
		} else {
			seen[k] = nil
		}
	}
	data, _ := json.Marshal(seen)
	tmp := fmt.Sprintf("%s.%d", out, os.Getpid())
	if os.WriteFile(tmp, data, 0o600) != nil || os.Rename(tmp, out) != nil {
		return 3
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := demo.Serve(ctx, os.Stdin, os.Stdout, nil); err != nil && ctx.Err() == nil {
		return 1
	}
	return 0
}

// readProbe is what the probe recorded last in file.
func readProbe(t *testing.T, file string) map[string]*string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("the probe server never started: %v", err)
		return nil
	}
	var m map[string]*string
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("probe output %s: %v", file, err)
	}
	return m
}

// need skips the test (fails it with CI=true) when what the real-client
// tests run is not installed.
func need(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...) + "; `make test` (or ./packaging/ensure-deps.sh npm; ./packaging/ensure-deps.sh clients) installs it"
	// make test installs node and the clients for Linux; the Windows
	// tests under Wine have none, with CI=true or not.
	wine.Skip(t, "has no Windows node nor AI clients installed: "+fmt.Sprintf(format, args...))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// repoDir is the repository root.
func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func installedDir(envVar, dflt string) string {
	if d := os.Getenv(envVar); d != "" {
		return d
	}
	return filepath.Join(repoDir(), dflt, "node_modules")
}

// buildMcptray builds the mcptray binary into dir.
func buildMcptray(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "mcptray")
	cmd := exec.Command("go", "build", "-tags", "nogui", "-o", bin, "mcptray")
	cmd.Dir = repoDir()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startEverything runs server-everything in an HTTP mode on a free port and
// returns its base URL.
func startEverything(t *testing.T, node, js, mode string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var log bytes.Buffer
	cmd := exec.Command(node, js, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Stdout, cmd.Stderr = &log, &log
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		killGroup(cmd)
		<-exited
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return fmt.Sprintf("http://127.0.0.1:%d", port)
		}
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited before listening: %s", mode, log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s not listening on %d after 60s", mode, port)
		}
	}
}

// authProxy forwards to a server and refuses every request whose
// Authorization header is not want: a client connects only when it resolved
// the header's reference.
type authProxy struct {
	URL  string
	want string
	mu   sync.Mutex
	seen map[string]int
}

func newAuthProxy(t *testing.T, target, want string) *authProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &authProxy{want: want, seen: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0) // a client hanging up on a stream is no error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		p.mu.Lock()
		p.seen[got]++
		p.mu.Unlock()
		if got != p.want {
			http.Error(w, "wrong or missing Authorization header", http.StatusUnauthorized)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Seen lists the Authorization values received, masked but for the one
// wanted.
func (p *authProxy) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for v, n := range p.seen {
		if v != p.want {
			v = fmt.Sprintf("%.12q…", v)
		}
		out = append(out, fmt.Sprintf("%s ×%d", v, n))
	}
	slices.Sort(out)
	return out
}

func (p *authProxy) Reset() {
	p.mu.Lock()
	p.seen = map[string]int{}
	p.mu.Unlock()
}

// run runs a program to completion with env in dir, stdin empty, and kills
// whatever it left running in its process group (clients start MCP servers,
// and server-everything does not exit on EOF).
func run(ctx context.Context, dir string, env []string, name string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	outF, err := os.CreateTemp("", "realclient-out-")
	if err != nil {
		return "", "", err
	}
	defer os.Remove(outF.Name())
	defer outF.Close()
	errF, err := os.CreateTemp("", "realclient-err-")
	if err != nil {
		return "", "", err
	}
	defer os.Remove(errF.Name())
	defer errF.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	// Files, not pipes: a server the client left behind must not hold Wait.
	cmd.Stdout, cmd.Stderr = outF, errF
	ownGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	err = cmd.Run()
	if cmd.Process != nil {
		killGroup(cmd)
	}
	o, _ := os.ReadFile(outF.Name())
	e, _ := os.ReadFile(errF.Name())
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), ctx.Err())
	}
	return string(o), string(e), err
}

// shellSplit splits a command line the way a POSIX shell would, refusing
// anything a shell would expand or treat as an operator: an exported line
// must mean the same pasted into any shell.
func shellSplit(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' at %d", i)
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				switch line[i] {
				case '$', '`':
					return nil, fmt.Errorf("%q inside double quotes at %d: the shell would expand it", line[i], i)
				case '\\':
					if i+1 < len(line) && strings.IndexByte("$`\"\\", line[i+1]) >= 0 {
						i++
					}
				}
				w.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, errors.New(`unterminated "`)
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(line) {
				return nil, errors.New("trailing backslash")
			}
			i++
			w.WriteByte(line[i])
			inWord = true
		case strings.IndexByte("$`;&|<>()*?[#~", c) >= 0 && !(c == '#' && inWord) && !(c == '~' && inWord):
			return nil, fmt.Errorf("unquoted %q at %d: the shell would interpret it", c, i)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

func TestShellSplit(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
		err  bool
	}{
		{`claude mcp add -e 'A=${B}' x -- cmd`, []string{"claude", "mcp", "add", "-e", "A=${B}", "x", "--", "cmd"}, false},
		{`a 'it'"'"'s' "q\"x" b\ c`, []string{"a", "it's", `q"x`, "b c"}, false},
		{`a ${B}`, nil, true},
		{`a "${B}"`, nil, true},
		{`a; b`, nil, true},
		{`a 'open`, nil, true},
	} {
		got, err := shellSplit(tt.in)
		if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("shellSplit(%q) = %q, %v", tt.in, got, err)
		}
	}
}

// appServer is `codex app-server`: JSON-RPC over stdio, through which Codex
// starts and lists its MCP servers without a model or an account.
type appServer struct {
	cmd     *exec.Cmd
	stdin   interface{ Write([]byte) (int, error) }
	mu      sync.Mutex
	next    int
	waiting map[int]chan rpcReply
	notes   []string
	done    chan struct{}
	stderr  lockedBuffer
}

// lockedBuffer is a buffer a process writes while the test may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startAppServer(t *testing.T, bin, dir string, env []string, args ...string) *appServer {
	t.Helper()
	a := startRPC(t, bin, dir, env, append([]string{"app-server"}, args...)...)
	if _, err := a.call(context.Background(), "initialize", map[string]any{"clientInfo": map[string]string{"name": "mcptray-realclients", "version": "1"}}); err != nil {
		t.Fatalf("codex app-server initialize: %v\n%s", err, a.stderr.String())
	}
	a.notify("initialized")
	return a
}

// startRPC runs bin args, a program that speaks newline-delimited JSON-RPC
// on its stdin and stdout (codex app-server, copilot --acp).
func startRPC(t *testing.T, bin, dir string, env []string, args ...string) *appServer {
	t.Helper()
	a := &appServer{waiting: map[int]chan rpcReply{}, done: make(chan struct{})}
	a.cmd = exec.Command(bin, args...)
	a.cmd.Dir, a.cmd.Env = dir, env
	a.cmd.Stderr = &a.stderr
	ownGroup(a.cmd)
	in, err := a.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.stdin = in
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(a.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
				rpcReply
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			a.mu.Lock()
			if m.ID != nil && m.Method == "" {
				if ch := a.waiting[*m.ID]; ch != nil {
					ch <- m.rpcReply
					delete(a.waiting, *m.ID)
				}
			} else if m.Method != "" {
				a.notes = append(a.notes, m.Method+" "+string(m.Params))
			}
			a.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		in.Close()
		killGroup(a.cmd)
		<-a.done
		a.cmd.Wait()
	})
	return a
}

func (a *appServer) notify(method string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stdin.Write(append(b, '\n'))
}

func (a *appServer) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	// Longer than the servers' startup timeout: Codex says which one failed.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	ch := make(chan rpcReply, 1)
	a.mu.Lock()
	a.next++
	id := a.next
	a.waiting[id] = ch
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	_, err := a.stdin.Write(append(b, '\n'))
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("%s: error %d: %s", method, r.Error.Code, r.Error.Message)
		}
		return r.Result, nil
	case <-a.done:
		return nil, fmt.Errorf("%s: codex app-server exited", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Stderr is what codex app-server wrote on stderr so far.
func (a *appServer) Stderr() string { return a.stderr.String() }

// Notes are the notifications received so far.
func (a *appServer) Notes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.notes)
}
