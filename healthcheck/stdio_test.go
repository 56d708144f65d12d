package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
	"mcptray/registry"
)

// inProcessDemo runs the demo server over a pair of io.Pipes and returns
// the target to connect to.
func inProcessDemo(t *testing.T, opts *demo.Options, hint Era) Target {
	t.Helper()
	cIn, sOut := io.Pipe() // server → client
	sIn, cOut := io.Pipe() // client → server
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = demo.Serve(ctx, sIn, sOut, opts)
		sOut.Close()
	}()
	t.Cleanup(func() {
		cancel()
		cOut.Close()
		cIn.Close()
		<-done
	})
	return Target{Server: &registry.Server{Name: "demo", Command: "mcptray"}, Stdin: cOut, Stdout: cIn, EraHint: hint}
}

func legacyVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= ModernVersion })
}

func checkDemoReport(t *testing.T, r *Report) {
	t.Helper()
	if r.ServerInfo.Name != demo.Name || r.ServerInfo.Version != demo.Version || r.ServerInfo.Title != "mcptray demo" {
		t.Errorf("serverInfo = %+v", r.ServerInfo)
	}
	if r.Instructions != demo.Instructions {
		t.Errorf("instructions = %q", r.Instructions)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
		if !json.Valid(tool.InputSchema) || !strings.Contains(string(tool.InputSchema), `"properties"`) {
			t.Errorf("tool %s input schema = %s", tool.Name, tool.InputSchema)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"add", "echo", "time"}) {
		t.Errorf("tools = %v", names)
	}
	if len(r.Resources) != 1 || r.Resources[0].URI != "demo://readme" {
		t.Errorf("resources = %+v", r.Resources)
	}
	if len(r.Prompts) != 1 || r.Prompts[0].Name != "greet" || len(r.Prompts[0].Arguments) != 1 || !r.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts = %+v", r.Prompts)
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(r.Capabilities, &caps); err != nil {
		t.Fatalf("capabilities %s: %v", r.Capabilities, err)
	}
	for _, k := range []string{"tools", "resources", "prompts"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("capabilities %s lack %q", r.Capabilities, k)
		}
	}
	if !measured(r.ConnectLatency) {
		t.Errorf("ConnectLatency = %v", r.ConnectLatency)
	}
	if len(r.Diagnoses) != 0 {
		t.Errorf("diagnoses = %+v", r.Diagnoses)
	}
}

func TestDemoInProcess(t *testing.T) {
	tests := []struct {
		name        string
		opts        *demo.Options
		hint        Era
		era         Era
		version     string
		sourcePart  string
		probeMethod string
	}{
		{"both eras, detect", nil, "", EraModern, ModernVersion, "server/discover answered", "server/discover"},
		{"legacy only, detect", &demo.Options{Versions: legacyVersions()}, "", EraLegacy, LatestLegacyVersion, "initialize", "ping"},
		{"both eras, legacy remembered", nil, EraLegacy, EraLegacy, LatestLegacyVersion, "remembered", "ping"},
		{"only 2024-11-05", &demo.Options{Versions: []string{"2024-11-05"}}, "", EraLegacy, "2024-11-05", "initialize", "ping"},
		// The gateway's sessions prefer initialize: a server that refuses
		// it gets server/discover on the same pipes, and a remembered
		// modern era goes straight there.
		{"both eras, initialize preferred", nil, "", EraLegacy, LatestLegacyVersion, "initialize: tried first", "ping"},
		{"modern only, initialize preferred", &demo.Options{ModernOnly: true}, "", EraModern, ModernVersion, "initialize refused (-32600 initialize is not supported; this server speaks 2026-07-28); server/discover answered", "server/discover"},
		{"modern only, modern remembered", &demo.Options{ModernOnly: true}, EraModern, EraModern, ModernVersion, "remembered from an earlier start; server/discover answered", "server/discover"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxTimeout(t, 20*time.Second)
			s, err := Connect(ctx, inProcessDemo(t, tt.opts, tt.hint), &Options{PreferLegacy: strings.Contains(tt.name, "initialize preferred") || tt.opts != nil && tt.opts.ModernOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.Report()
			if r.Era != tt.era || r.ProtocolVersion != tt.version || !strings.Contains(r.EraSource, tt.sourcePart) {
				t.Errorf("era %s version %s source %q; want %s %s %q", r.Era, r.ProtocolVersion, r.EraSource, tt.era, tt.version, tt.sourcePart)
			}
			checkDemoReport(t, r)
			for range 3 {
				d, err := s.Probe(ctxTimeout(t, 5*time.Second))
				if err != nil {
					t.Fatalf("probe: %v", err)
				}
				if !measured(d) {
					t.Errorf("probe latency %v", d)
				}
			}
		})
	}
}

// TestProbesConcurrentWithSDK checks mcptray's own probe requests and the
// SDK's traffic share the pipe without tearing a line.
func TestProbesConcurrentWithSDK(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	s, err := Connect(ctx, inProcessDemo(t, nil, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 20 {
		wg.Go(func() {
			if _, err := s.Probe(ctx); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			if _, err := s.cs.ListTools(ctx, nil); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDemoSubprocess(t *testing.T) {
	for _, hint := range []Era{"", EraLegacy} {
		t.Run("hint="+string(hint), func(t *testing.T) {
			p := startHelper(t, "demo")
			s, err := Connect(ctxTimeout(t, 20*time.Second), p.target("demo", hint), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkDemoReport(t, s.Report())
			if _, err := s.Probe(ctxTimeout(t, 5*time.Second)); err != nil {
				t.Fatal(err)
			}
			s.Close()
			// Closing the session closes stdin: the demo server exits on EOF.
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				t.Error("the demo server did not exit after Close closed its stdin")
			}
		})
	}
}

func TestStdioMisbehaving(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		timeout time.Duration
		check   func(t *testing.T, s *Session, err error)
	}{
		{"banner before the handshake", "banner", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			if err != nil {
				t.Fatal(err)
			}
			d := findDiagnosis(s.Report(), CodeStdoutNoise)
			if d == nil || len(d.Evidence) != 1 || !strings.Contains(d.Evidence[0], "fake server 0.1 listening on stdio") {
				t.Fatalf("noise diagnosis = %+v", d)
			}
			if len(s.Report().Tools) != 1 {
				t.Errorf("tools = %+v", s.Report().Tools)
			}
		}},
		{"slow start inside the deadline", "slow=100", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"offers only 2024-11-05", "only-2024", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if r := s.Report(); r.ProtocolVersion != "2024-11-05" || r.Era != EraLegacy {
				t.Errorf("version %s era %s", r.ProtocolVersion, r.Era)
			}
		}},
		{"answers an unknown version", "bad-version", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			d := asDiagnosis(t, err)
			if d.Code != CodeVersionMismatch || !strings.Contains(d.Message, `"2023-01-01"`) || !strings.Contains(d.Message, LatestLegacyVersion) {
				t.Fatalf("got %+v", d)
			}
		}},
		{"tools over several pages", "paged", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range s.Report().Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, []string{"a", "b", "c", "d", "e"}) {
				t.Errorf("tools = %v", names)
			}
		}},
		{"a tool's description hides instructions", "hidden", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			if err != nil {
				t.Fatal(err)
			}
			r := s.Report()
			d := findDiagnosis(r, CodeHiddenInstructions)
			if d == nil || r.Degraded() || !strings.Contains(d.Message, "Tool only's definition") || len(d.Evidence) != 3 ||
				!strings.Contains(d.Evidence[0], "tool only: description: holds invisible characters") || !strings.Contains(d.Fix, "mcptray tools hold") {
				t.Fatalf("degraded %v, diagnosis %+v", r.Degraded(), d)
			}
		}},
		{"declared list fails", "list-fail", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			if err != nil {
				t.Fatal(err)
			}
			r := s.Report()
			d := findDiagnosis(r, CodeListFailed)
			if !r.Degraded() || d == nil || !strings.Contains(d.Message, "prompts") || !strings.Contains(d.Message, "prompt store unavailable") {
				t.Fatalf("degraded %v, diagnosis %+v", r.Degraded(), d)
			}
			if len(r.Tools) != 1 {
				t.Errorf("tools = %+v", r.Tools)
			}
		}},
		{"exits on initialize", "exit-on-initialize", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			d := asDiagnosis(t, err)
			if d.Code != CodeExitedDuringStartup || errors.Is(err, ErrDiedDuringDiscover) {
				t.Fatalf("got %+v", d)
			}
		}},
		{"modern fake", "modern", 20 * time.Second, func(t *testing.T, s *Session, err error) {
			if err != nil {
				t.Fatal(err)
			}
			r := s.Report()
			if r.Era != EraModern || r.ServerInfo.Name != "fake" || r.Instructions != "fake modern server" {
				t.Errorf("report %+v", r)
			}
			if string(r.Capabilities) != `{"tools":{}}` {
				t.Errorf("capabilities %s, want them verbatim", r.Capabilities)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startHelper(t, tt.mode)
			s, err := Connect(ctxTimeout(t, tt.timeout), p.target(tt.mode, ""), nil)
			if s != nil {
				defer s.Close()
			}
			tt.check(t, s, err)
		})
	}
}

// TestDiedDuringDiscover follows what the supervisor does: the server exits
// on server/discover, so it is started again and connected with initialize.
func TestDiedDuringDiscover(t *testing.T) {
	p := startHelper(t, "exit-on-discover")
	_, err := Connect(ctxTimeout(t, 20*time.Second), p.target("x", ""), nil)
	if !errors.Is(err, ErrDiedDuringDiscover) {
		t.Fatalf("err = %v, want ErrDiedDuringDiscover", err)
	}
	if d := asDiagnosis(t, err); d.Code != CodeExitedDuringStartup {
		t.Errorf("code %s", d.Code)
	}
	p = startHelper(t, "exit-on-discover")
	s, err := Connect(ctxTimeout(t, 20*time.Second), p.target("x", EraLegacy), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.Report(); r.Era != EraLegacy || !strings.Contains(r.EraSource, "remembered") {
		t.Errorf("era %s source %q", r.Era, r.EraSource)
	}
	if _, err := s.Probe(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
}

// TestDiscoverUnanswered: a server that ignores server/discover is taken
// as legacy once the discover timeout passes on the clock.
func TestDiscoverUnanswered(t *testing.T) {
	r := connectPastDiscoverTimeout(t, "ignore-discover")
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.s.Close()
	rep := r.s.Report()
	if rep.Era != EraLegacy || rep.EraSource != "server/discover unanswered within 2s; initialize" || rep.ProtocolVersion != "2025-06-18" {
		t.Errorf("era %s source %q version %s", rep.Era, rep.EraSource, rep.ProtocolVersion)
	}
	// The server's late error reply to server/discover, if any, was
	// dropped: the session works.
	if _, err := r.s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
}

func TestProbeAfterExit(t *testing.T) {
	for _, mode := range []string{"only-2024", "modern"} {
		t.Run(mode, func(t *testing.T) {
			p := startHelper(t, mode)
			s, err := Connect(ctxTimeout(t, 20*time.Second), p.target("x", ""), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p.cmd.Process.Kill()
			<-p.exited
			_, err = s.Probe(ctxTimeout(t, 5*time.Second))
			if d := asDiagnosis(t, err); d.Code != CodeProbeFailed {
				t.Fatalf("got %+v", d)
			}
		})
	}
}

func TestNoiseAfterHandshake(t *testing.T) {
	p := startHelper(t, "noisy-later")
	got := make(chan string, 4)
	s, err := Connect(ctxTimeout(t, 20*time.Second), p.target("x", ""), &Options{OnNoise: func(l string) { got <- l }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The server prints the line before it reads the next request, so
	// once a probe is answered the line has been read; the session
	// survives it.
	if _, err := s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatalf("the session must survive noise: %v", err)
	}
	d := findDiagnosis(s.Report(), CodeStdoutNoise)
	if d == nil || !strings.Contains(strings.Join(d.Evidence, " "), "debug: client connected") {
		t.Fatalf("noise diagnosis %+v", d)
	}
	// OnNoise has it only if it came after the handshake; either is right.
	select {
	case l := <-got:
		if l != "debug: client connected" {
			t.Errorf("OnNoise got %q", l)
		}
	default:
	}
}

func TestStdioCancel(t *testing.T) {
	p := startHelper(t, "silent")
	ctx, cancel := context.WithCancel(context.Background())
	tg := p.target("x", "")
	writes := watchWrites(&tg)
	res := connectAsync(ctx, tg, nil)
	waitWrite(t, writes, "server/discover")
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", r.err)
	}
}

// BenchmarkConnectDemo measures a full Connect (handshake and discovery)
// and Close against the in-process demo server, in each era.
func BenchmarkConnectDemo(b *testing.B) {
	for _, hint := range []Era{"", EraLegacy} {
		b.Run("hint="+string(hint), func(b *testing.B) {
			for b.Loop() {
				cIn, sOut := io.Pipe()
				sIn, cOut := io.Pipe()
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = demo.Serve(context.Background(), sIn, sOut, nil)
					sOut.Close()
				}()
				s, err := Connect(context.Background(), Target{Server: &registry.Server{Name: "demo", Command: "x"}, Stdin: cOut, Stdout: cIn, EraHint: hint}, nil)
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
				<-done
			}
		})
	}
}

// BenchmarkProbe measures one liveness probe in each era.
func BenchmarkProbe(b *testing.B) {
	for _, hint := range []Era{"", EraLegacy} {
		b.Run("hint="+string(hint), func(b *testing.B) {
			cIn, sOut := io.Pipe()
			sIn, cOut := io.Pipe()
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = demo.Serve(context.Background(), sIn, sOut, nil)
				sOut.Close()
			}()
			s, err := Connect(context.Background(), Target{Server: &registry.Server{Name: "demo", Command: "x"}, Stdin: cOut, Stdout: cIn, EraHint: hint}, nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := s.Probe(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
			<-done
		})
	}
}

// TestDiscoverSkips: a session for one call lists only what the call
// needs; the tools it lists still check the call's arguments.
func TestDiscoverSkips(t *testing.T) {
	p := startHelper(t, "demo")
	s, err := Connect(ctxTimeout(t, 20*time.Second), p.target("demo", ""), &Options{Skip: ListResources | ListPrompts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Report()
	if len(r.Tools) != 3 || len(r.Resources) != 0 || len(r.Prompts) != 0 {
		t.Errorf("listed %d tools, %d resources, %d prompts; want the 3 tools only", len(r.Tools), len(r.Resources), len(r.Prompts))
	}
	var ae *ArgsError
	if _, err := s.CallTool(ctxTimeout(t, 5*time.Second), "add", map[string]any{"a": "two", "b": 3.0}); !errors.As(err, &ae) || ae.Field != "a" {
		t.Errorf("add with a string: %v, want an ArgsError for a", err)
	}
	res, err := s.CallTool(ctxTimeout(t, 5*time.Second), "add", map[string]any{"a": 2.0, "b": 3.0})
	if err != nil || res.IsError || res.OutputError != nil {
		t.Fatalf("add: %+v, %v", res, err)
	}
	s2, err := Connect(ctxTimeout(t, 20*time.Second), startHelper(t, "demo").target("demo", ""), &Options{Skip: ListAll})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if r := s2.Report(); len(r.Tools)+len(r.Resources)+len(r.Prompts) != 0 {
		t.Errorf("Skip: ListAll listed %+v", r)
	}
	if _, err := s2.ReadResource(ctxTimeout(t, 5*time.Second), "demo://readme"); err != nil {
		t.Errorf("read with nothing listed: %v", err)
	}
}

// TestSlowDualEraServer: a server of both eras that takes longer than the
// discover timeout to start gets initialize after the server/discover
// mcptray answered for; it then answers both, the discover with a result
// and initialize with a refusal (the go-sdk refuses initialize after
// server/discover). It speaks 2026-07-28: the session is made so, on the
// same pipes, not failed on the refusal.
// The go-sdk answers the two requests at once: the refusal may come
// first. A canned reply to the discover's id before them (stray-on-init)
// is evidence, not the late reply.
func TestSlowDualEraServer(t *testing.T) {
	for _, mode := range []string{"slow-dual", "slow-dual,refuse-first", "slow-dual,stray-on-init"} {
		t.Run(mode, func(t *testing.T) {
			r := connectPastDiscoverTimeout(t, mode)
			if r.err != nil {
				t.Fatalf("connect: %v", r.err)
			}
			rep := r.s.Report()
			if rep.Era != EraModern || !strings.Contains(rep.EraSource, "answered late") || len(rep.Tools) != 1 {
				t.Errorf("era %s source %q tools %d", rep.Era, rep.EraSource, len(rep.Tools))
			}
			if _, err := r.s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
