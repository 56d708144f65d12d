package tooltrust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcptray/registry"
)

// FileName is the store's file, beside servers.toml.
const FileName = "tools-approved.json"

// PathFor is the store's file for the config at configPath.
func PathFor(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), FileName)
}

// Why a tool is held.
const (
	ReasonChanged   = "changed"    // its definition differs from the one approved
	ReasonNewServer = "new server" // its server is new and approve_new_servers is on
	ReasonByHand    = "held"       // the person held it (mcptray tools hold)
)

var (
	// ErrNotHeld is an approval of a tool that is not held.
	ErrNotHeld = errors.New("is not held")
	// ErrUnknown is a server or tool the store has no record of.
	ErrUnknown = errors.New("mcptray has not seen")
)

// Options tunes a [Store]; nil means defaults.
type Options struct {
	// HoldNewServers holds every tool of a server the store has no record
	// of ([settings] approve_new_servers).
	HoldNewServers bool
	// Now is the clock of the records' times (default time.Now).
	Now func() time.Time
}

// Store is the trust store of one config. Its methods are safe for
// concurrent use, and other processes may change the file meanwhile
// (every change is made to the file as it is then, under its lock).
type Store struct {
	path    string
	now     func() time.Time
	holdNew atomic.Bool

	mu      sync.Mutex // protects doc, last and changed; held across the file's lock and write
	doc     *document
	last    []byte // the file as last read or written (nil: none)
	changed chan struct{}

	// held is what [Store.Held] reads without the lock: server → tool →
	// hold, replaced (never changed) by every change.
	held atomic.Pointer[map[string]map[string]Hold]
}

type document struct {
	Version int                   `json:"version"`
	Servers map[string]*serverDoc `json:"servers"`
}

type serverDoc struct {
	Tools map[string]*toolDoc `json:"tools"`
}

// toolDoc is one tool's record: the definition approved (none for a new
// server's tool not yet approved), and the hold, if any.
type toolDoc struct {
	Digest     string          `json:"digest,omitempty"`
	Definition json.RawMessage `json:"definition,omitempty"`
	Approved   time.Time       `json:"approved,omitzero"`
	Hold       *holdDoc        `json:"hold,omitempty"`
}

type holdDoc struct {
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Digest and Definition are the definition held back (the server's
	// latest); for a hold by hand, the approved one.
	Digest     string          `json:"digest,omitempty"`
	Definition json.RawMessage `json:"definition,omitempty"`
}

// Hold is why a tool is held.
type Hold struct {
	Reason string
	Since  time.Time
}

// Open reads the store at path (see [PathFor]); a file that does not exist
// yet is an empty store, written at its first change.
func Open(path string, opts *Options) (*Store, error) {
	s := &Store{path: path, now: time.Now, changed: make(chan struct{})}
	if opts != nil {
		if opts.Now != nil {
			s.now = opts.Now
		}
		s.holdNew.Store(opts.HoldNewServers)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.reloadLocked(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// SetHoldNewServers changes [Options.HoldNewServers] (the config was
// reloaded).
func (s *Store) SetHoldNewServers(on bool) { s.holdNew.Store(on) }

// Changed returns a channel closed at the next change of what is held.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Held is the hold on server's tool, if it is held.
func (s *Store) Held(server, tool string) (Hold, bool) {
	h, ok := (*s.held.Load())[server][tool]
	return h, ok
}

// HeldTools are the names of server's held tools, sorted.
func (s *Store) HeldTools(server string) []string {
	m := (*s.held.Load())[server]
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Reload re-reads the file when another process changed it, and reports
// whether it did.
func (s *Store) Reload() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reloadLocked()
}

func (s *Store) reloadLocked() (bool, error) {
	data, err := registry.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return false, fmt.Errorf("the tool approvals %s: %w", s.path, err)
	}
	if s.doc != nil && bytes.Equal(data, s.last) {
		return false, nil
	}
	doc, err := parseDoc(s.path, data)
	if err != nil {
		return false, err
	}
	s.doc, s.last = doc, data
	s.publishLocked()
	return true, nil
}

func parseDoc(path string, data []byte) (*document, error) {
	doc := &document{Version: 1, Servers: map[string]*serverDoc{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, nil
	}
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, fmt.Errorf("the tool approvals %s do not parse (%v): move the file away and every tool is trusted anew", path, err)
	}
	if doc.Servers == nil {
		doc.Servers = map[string]*serverDoc{}
	}
	for name, sd := range doc.Servers {
		if sd == nil || sd.Tools == nil {
			doc.Servers[name] = &serverDoc{Tools: map[string]*toolDoc{}}
		}
		for tool, td := range doc.Servers[name].Tools {
			if td == nil {
				delete(doc.Servers[name].Tools, tool)
			}
		}
	}
	return doc, nil
}

// publishLocked makes the held set readable without the lock, and tells
// [Store.Changed]'s waiters when it differs.
func (s *Store) publishLocked() {
	next := map[string]map[string]Hold{}
	for srv, sd := range s.doc.Servers {
		for tool, td := range sd.Tools {
			if td.Hold != nil {
				if next[srv] == nil {
					next[srv] = map[string]Hold{}
				}
				next[srv][tool] = Hold{Reason: td.Hold.Reason, Since: td.Hold.Since}
			}
		}
	}
	if old := s.held.Load(); old != nil && sameHolds(*old, next) {
		return
	}
	s.held.Store(&next)
	close(s.changed)
	s.changed = make(chan struct{})
}

func sameHolds(a, b map[string]map[string]Hold) bool {
	if len(a) != len(b) {
		return false
	}
	for srv, ta := range a {
		tb := b[srv]
		if len(ta) != len(tb) {
			return false
		}
		for t, h := range ta {
			if g, ok := tb[t]; !ok || g.Reason != h.Reason {
				return false
			}
		}
	}
	return true
}

// update applies change to the file's document as it is now, under the
// file's lock, and writes it when change reports a change.
func (s *Store) update(change func(doc *document) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var doc *document
	var written []byte
	_, err := registry.EditFile(s.path, &registry.WriteOptions{Perm: 0o600}, func(old []byte) ([]byte, error) {
		d, err := parseDoc(s.path, old)
		if err != nil {
			return nil, err
		}
		changed, err := change(d)
		if err != nil {
			return nil, err
		}
		doc, written = d, old
		if changed {
			written = encodeDoc(d)
		}
		return written, nil
	})
	if err != nil {
		return err
	}
	s.doc, s.last = doc, written
	s.publishLocked()
	return nil
}

func encodeDoc(d *document) []byte {
	d.Version = 1
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		panic("tooltrust: encoding the store: " + err.Error()) // only maps, strings, times and valid JSON
	}
	return append(b, '\n')
}

// seen is one definition as observed: its canonical form and digest.
type seen struct {
	name      string
	canonical json.RawMessage
	digest    string
}

// Observe records what server lists now (each tool's tools/list JSON):
// a tool seen for the first time is trusted as it is (or held, when its
// server is new and approve_new_servers is on); a known tool whose
// definition differs from the one approved is held, with the new
// definition kept for the diff; a held tool whose definition is back to
// the approved one is released. It writes the file only when something
// changed. A definition that is not a JSON object with a name is an error
// naming it, and nothing is recorded.
func (s *Store) Observe(server string, defs []json.RawMessage) error {
	var tools []seen
	for i, def := range defs {
		c, err := Canonical(def)
		if err != nil {
			return fmt.Errorf("server %s, tool %d: %w", server, i+1, err)
		}
		var n struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(c, &n) != nil || n.Name == "" {
			return fmt.Errorf("server %s, tool %d: a tool's definition needs a name", server, i+1)
		}
		tools = append(tools, seen{name: n.Name, canonical: c, digest: digestOf(c)})
	}
	holdNew := s.holdNew.Load()
	s.mu.Lock()
	dirty := observe(s.doc.only(server), server, tools, holdNew, s.now())
	s.mu.Unlock()
	if !dirty {
		return nil
	}
	return s.update(func(doc *document) (bool, error) {
		return observe(doc, server, tools, holdNew, s.now()), nil
	})
}

// observe applies an observation to doc and reports whether it changed.
func observe(doc *document, server string, tools []seen, holdNew bool, now time.Time) bool {
	if len(tools) == 0 {
		return false
	}
	sd := doc.Servers[server]
	changed := false
	newServer := sd == nil
	if newServer {
		sd = &serverDoc{Tools: map[string]*toolDoc{}}
		doc.Servers[server] = sd
		changed = true
	}
	// A server stays new while a tool of it waits for its first approval
	// (its tools may come in more than one list).
	pendingNew := holdNew && (newServer || slices.ContainsFunc(mapValues(sd.Tools), func(td *toolDoc) bool {
		return td.Hold != nil && td.Hold.Reason == ReasonNewServer
	}))
	for _, t := range tools {
		td := sd.Tools[t.name]
		switch {
		case td == nil && pendingNew:
			sd.Tools[t.name] = &toolDoc{Hold: &holdDoc{Reason: ReasonNewServer, Since: now, Digest: t.digest, Definition: t.canonical}}
			changed = true
		case td == nil:
			sd.Tools[t.name] = &toolDoc{Digest: t.digest, Definition: t.canonical, Approved: now}
			changed = true
		case td.Digest == t.digest:
			if td.Hold != nil && td.Hold.Reason == ReasonChanged {
				td.Hold = nil // back to what was approved
				changed = true
			}
		case td.Hold != nil && td.Hold.Digest == t.digest:
			// Held already, for this very definition.
		case td.Digest == "":
			td.Hold = &holdDoc{Reason: td.Hold.Reason, Since: td.Hold.Since, Digest: t.digest, Definition: t.canonical}
			changed = true
		default:
			td.Hold = &holdDoc{Reason: ReasonChanged, Since: now, Digest: t.digest, Definition: t.canonical}
			changed = true
		}
	}
	return changed
}

func mapValues[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// only is a copy of d with server's record alone, for trying an
// observation out (observe replaces records, never changes one in place).
func (d *document) only(server string) *document {
	out := &document{Servers: map[string]*serverDoc{}}
	if sd := d.Servers[server]; sd != nil {
		c := &serverDoc{Tools: make(map[string]*toolDoc, len(sd.Tools))}
		for n, td := range sd.Tools {
			cp := *td
			c.Tools[n] = &cp
		}
		out.Servers[server] = c
	}
	return out
}

// Approve approves server's tool as the server lists it now (the held
// definition becomes the approved one) and releases it; tool "" approves
// every held tool of the server.
func (s *Store) Approve(server, tool string) error {
	return s.update(func(doc *document) (bool, error) {
		sd, err := doc.server(server)
		if err != nil {
			return false, err
		}
		names := []string{tool}
		if tool == "" {
			names = nil
			for n, td := range sd.Tools {
				if td.Hold != nil {
					names = append(names, n)
				}
			}
			if len(names) == 0 {
				return false, fmt.Errorf("no tool of server %s is held", server)
			}
		}
		now := s.now()
		for _, n := range names {
			td, err := doc.tool(server, sd, n)
			if err != nil {
				return false, err
			}
			if td.Hold == nil {
				return false, fmt.Errorf("tool %s of server %s %w", n, server, ErrNotHeld)
			}
			if td.Hold.Definition != nil && td.Hold.Digest != td.Digest {
				td.Digest, td.Definition, td.Approved = td.Hold.Digest, td.Hold.Definition, now
			}
			td.Hold = nil
		}
		return true, nil
	})
}

// HoldTool holds server's tool by hand until it is approved.
func (s *Store) HoldTool(server, tool string) error {
	return s.update(func(doc *document) (bool, error) {
		sd, err := doc.server(server)
		if err != nil {
			return false, err
		}
		td, err := doc.tool(server, sd, tool)
		if err != nil {
			return false, err
		}
		if td.Hold != nil {
			return false, nil
		}
		td.Hold = &holdDoc{Reason: ReasonByHand, Since: s.now(), Digest: td.Digest, Definition: td.Definition}
		return true, nil
	})
}

func (d *document) server(name string) (*serverDoc, error) {
	if sd := d.Servers[name]; sd != nil {
		return sd, nil
	}
	known := slices.Sorted(func(yield func(string) bool) {
		for n := range d.Servers {
			if !yield(n) {
				return
			}
		}
	})
	msg := "(it has seen none yet)"
	if len(known) > 0 {
		msg = "(it has seen " + strings.Join(known, ", ") + ")"
	}
	return nil, fmt.Errorf("%w the tools of a server named %s %s", ErrUnknown, name, msg)
}

func (d *document) tool(server string, sd *serverDoc, name string) (*toolDoc, error) {
	if td := sd.Tools[name]; td != nil {
		return td, nil
	}
	known := make([]string, 0, len(sd.Tools))
	for n := range sd.Tools {
		known = append(known, n)
	}
	sort.Strings(known)
	return nil, fmt.Errorf("%w a tool named %s on server %s (it has: %s)", ErrUnknown, name, server, strings.Join(known, ", "))
}

// Held is one held tool, for a person to decide on.
type Held struct {
	Server string    `json:"server"`
	Tool   string    `json:"tool"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Old is the definition approved (nil for a new server's tool), New
	// the one held back (canonical JSON).
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
	// Flags are signs of hidden instructions in New.
	Flags []Flag `json:"flags,omitempty"`
}

// Why says why the tool is held and how to release it.
func (h Held) Why() string {
	approve := fmt.Sprintf("`mcptray tools approve %s %s`", h.Server, h.Tool)
	switch h.Reason {
	case ReasonChanged:
		return fmt.Sprintf("its definition changed since it was approved; see `mcptray tools diff %s %s`, then approve it with %s", h.Server, h.Tool, approve)
	case ReasonNewServer:
		return "its server is new and approve_new_servers is on; approve it with " + approve
	default:
		return "it was held by hand; release it with " + approve
	}
}

// Diff is the change from Old to New, line by line (see [Diff]).
func (h Held) Diff() string { return Diff(h.Old, h.New) }

// List is every held tool, by server and tool name.
func (s *Store) List() []Held {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Held
	for srv, sd := range s.doc.Servers {
		for tool, td := range sd.Tools {
			if td.Hold == nil {
				continue
			}
			h := Held{Server: srv, Tool: tool, Reason: td.Hold.Reason, Since: td.Hold.Since, Old: td.Definition, New: td.Hold.Definition}
			if h.New == nil {
				h.New = td.Definition
			}
			h.Flags = Flags(h.New)
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// Definition is the approved definition of server's tool (canonical JSON;
// nil when none was approved).
func (s *Store) Definition(server, tool string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sd := s.doc.Servers[server]; sd != nil {
		if td := sd.Tools[tool]; td != nil {
			return td.Definition
		}
	}
	return nil
}
