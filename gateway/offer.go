package gateway

// What an aggregate offers: the union of its servers' catalogues, filtered
// by the profile, named so that clients take the names, and routed back.
// It is computed in one place, [Gateway.computeOffer], from the
// catalogues the supervisor already holds (no upstream round trip), so
// what hides a tool (a profile's deny list, a hold) and what replaces the
// list (search exposure) act on every session alike.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"mcptray/gateway/searchtools"
	"mcptray/gateway/toolsearch"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// catalogue is what a server offers, as last seen: from its health
// check's discovery, a fresh list after it said a list changed, or the
// file kept from an earlier run (a lazy server not started yet).
type catalogue struct {
	Tools        []*mcp.Tool             `json:"tools"`
	Prompts      []*mcp.Prompt           `json:"prompts"`
	Resources    []*mcp.Resource         `json:"resources"`
	Templates    []*mcp.ResourceTemplate `json:"resourceTemplates"`
	Capabilities *mcp.ServerCapabilities `json:"capabilities,omitempty"`
	Instructions string                  `json:"instructions,omitempty"`
	// Seen is when the server last answered with it.
	Seen time.Time `json:"seen"`
	// fromDisk: read from the file, not from this run's server.
	fromDisk bool
}

// catalogueOf is the catalogue in a health check's report.
func catalogueOf(rep *healthcheck.Report, seen time.Time) *catalogue {
	c := &catalogue{Instructions: rep.Instructions, Seen: seen}
	if len(rep.Capabilities) > 0 {
		var caps mcp.ServerCapabilities
		if json.Unmarshal(rep.Capabilities, &caps) == nil {
			c.Capabilities = &caps
		}
	}
	for _, t := range rep.Tools {
		mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}
		if len(t.InputSchema) > 0 {
			mt.InputSchema = t.InputSchema
		} else {
			mt.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if len(t.OutputSchema) > 0 {
			mt.OutputSchema = t.OutputSchema
		}
		c.Tools = append(c.Tools, mt)
	}
	for _, p := range rep.Prompts {
		mp := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		c.Prompts = append(c.Prompts, mp)
	}
	for _, r := range rep.Resources {
		c.Resources = append(c.Resources, &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
	}
	for _, r := range rep.ResourceTemplates {
		c.Templates = append(c.Templates, &mcp.ResourceTemplate{URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
	}
	return c
}

// catalogues keeps each server's catalogue, and its file.
type catalogues struct {
	dir string // "" keeps none on disk

	mu     sync.Mutex // protects the fields below
	byRep  map[string]*catFromReport
	fresh  map[string]*freshLists // lists fetched after a list_changed
	onDisk map[string]*catalogue  // read once per run (nil entry: none)
}

type catFromReport struct {
	rep *healthcheck.Report
	cat *catalogue
}

// freshLists are a server's lists fetched after it said one changed; they
// belong to the upstream report they were fetched under.
type freshLists struct {
	rep       *healthcheck.Report
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	has       map[string]bool // which of the lists were fetched
}

// of is server st's catalogue now: nil when none is known.
func (cs *catalogues) of(st *supervisor.ServerState) *catalogue {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	name := st.Name
	if st.Report == nil {
		return cs.diskLocked(name)
	}
	if cs.byRep == nil {
		cs.byRep = map[string]*catFromReport{}
	}
	cr := cs.byRep[name]
	if cr == nil || cr.rep != st.Report {
		cr = &catFromReport{rep: st.Report, cat: catalogueOf(st.Report, st.LastLive)}
		cs.byRep[name] = cr
		cs.saveLocked(name, cr.cat)
	}
	cat := cr.cat
	if f := cs.fresh[name]; f != nil && f.rep == st.Report {
		c := *cat
		if f.has["tools"] {
			c.Tools = f.tools
		}
		if f.has["prompts"] {
			c.Prompts = f.prompts
		}
		if f.has["resources"] {
			c.Resources, c.Templates = f.resources, f.templates
		}
		cat = &c
	}
	return cat
}

// setFresh records a list fetched from server name under report rep.
func (cs *catalogues) setFresh(name string, rep *healthcheck.Report, set func(*freshLists)) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.fresh == nil {
		cs.fresh = map[string]*freshLists{}
	}
	f := cs.fresh[name]
	if f == nil || f.rep != rep {
		f = &freshLists{rep: rep, has: map[string]bool{}}
		cs.fresh[name] = f
	}
	set(f)
	if cr := cs.byRep[name]; cr != nil && cr.rep == rep {
		c := *cr.cat
		if f.has["tools"] {
			c.Tools = f.tools
		}
		if f.has["prompts"] {
			c.Prompts = f.prompts
		}
		if f.has["resources"] {
			c.Resources, c.Templates = f.resources, f.templates
		}
		cs.saveLocked(name, &c)
	}
}

func (cs *catalogues) file(name string) string {
	return filepath.Join(cs.dir, name+".json")
}

func (cs *catalogues) diskLocked(name string) *catalogue {
	if cs.dir == "" {
		return nil
	}
	if c, ok := cs.onDisk[name]; ok {
		return c
	}
	if cs.onDisk == nil {
		cs.onDisk = map[string]*catalogue{}
	}
	var c *catalogue
	if b, err := os.ReadFile(cs.file(name)); err == nil {
		var got catalogue
		if json.Unmarshal(b, &got) == nil {
			got.fromDisk = true
			c = &got
		}
	}
	cs.onDisk[name] = c
	return c
}

// saveLocked keeps c as server name's last catalogue (best effort: a
// catalogue that cannot be written is only not remembered).
func (cs *catalogues) saveLocked(name string, c *catalogue) {
	if cs.dir == "" || !registry.ValidName(name) {
		return
	}
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	if old, err := os.ReadFile(cs.file(name)); err == nil && string(old) == string(b) {
		return
	}
	if err := os.MkdirAll(cs.dir, 0o700); err != nil {
		return
	}
	_ = registry.WriteFileAtomic(cs.file(name), b, &registry.WriteOptions{Perm: 0o600})
	keep := *c
	keep.fromDisk = true
	if cs.onDisk == nil {
		cs.onDisk = map[string]*catalogue{}
	}
	cs.onDisk[name] = &keep
}

// route is where a name of an aggregate goes: a server and its own name.
type route struct {
	server string
	name   string
	// hidden says why the profile does not offer it ("" when it does).
	hidden string
}

type templateRoute struct {
	server string
	tmpl   *uritemplate.Template
}

// ProfileServer is one server of a profile as its aggregate offer was made.
type ProfileServer struct {
	Name  string           `json:"name"`
	State supervisor.State `json:"state"`
	// Offered: its catalogue is in the lists (it serves, or waits for a
	// client); Catalogue says where the catalogue came from.
	Offered   bool   `json:"offered"`
	Catalogue string `json:"catalogue,omitempty"` // "live", "remembered", ""
	Tools     int    `json:"tools"`
	// Why says why a server that is not listed is not ("stopped",
	// "disabled", …).
	Why string `json:"why,omitempty"`
}

// offer is what an aggregate of one profile offers at one moment.
type offer struct {
	profile string
	// err is why the profile cannot be served (unknown, invalid).
	err error

	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate

	toolRoutes   map[string]route
	promptRoutes map[string]route
	uriRoutes    map[string]string // resource URI -> server
	tmplRoutes   []templateRoute

	// search, for a profile with exposure = "search", answers the
	// search, describe and call tools listed in place of the union.
	search *searchtools.Exposure

	members      []ProfileServer
	caps         *mcp.ServerCapabilities
	instructions string
	// notices say what the naming had to resolve (a shortened name, a
	// collision), for a person.
	notices []string

	// keys tell whether a list differs from another offer's.
	toolsKey, promptsKey, resourcesKey string
	// inputs identify what the offer was made from: the same inputs make
	// the same offer.
	inputs string

	bodyMu sync.Mutex        // protects bodies; a leaf
	bodies map[string]string // each list's answer as the trace keeps it

}

// profiles is the gateway's copy of the config's profiles.
type profiles struct {
	sep  string
	list map[string]*registry.Profile
	gen  int
}

// SetProfiles gives the gateway the config's profiles and name separator
// (at start and after every reload); aggregates of a profile whose offer
// changed are told.
func (g *Gateway) SetProfiles(separator string, ps []*registry.Profile) {
	if separator == "" {
		separator = registry.DefaultSeparator
	}
	m := map[string]*registry.Profile{}
	for _, p := range ps {
		m[p.Name] = p
	}
	g.aggMu.Lock()
	g.profiles = profiles{sep: separator, list: m, gen: g.profiles.gen + 1}
	g.aggMu.Unlock()
	g.kickAggregates()
}

// profile returns profile name and the separator.
func (g *Gateway) profile(name string) (*registry.Profile, string, int) {
	g.aggMu.Lock()
	defer g.aggMu.Unlock()
	sep := g.profiles.sep
	if sep == "" {
		sep = registry.DefaultSeparator
	}
	if p := g.profiles.list[name]; p != nil {
		return p, sep, g.profiles.gen
	}
	if name == registry.DefaultProfile {
		return &registry.Profile{Name: registry.DefaultProfile}, sep, g.profiles.gen
	}
	return nil, sep, g.profiles.gen
}

// offerOf is profile name's offer now, made again only when what it is
// made from changed.
func (g *Gateway) offerOf(name string) *offer {
	snap := g.up.Snapshot()
	p, sep, gen := g.profile(name)
	inputs := g.offerInputs(p, gen, &snap)
	g.aggMu.Lock()
	if o := g.offers[name]; o != nil && o.inputs == inputs {
		g.aggMu.Unlock()
		return o
	}
	g.aggMu.Unlock()
	o := g.computeOffer(name, p, sep, &snap)
	o.inputs = inputs
	g.aggMu.Lock()
	if g.offers == nil {
		g.offers = map[string]*offer{}
	}
	g.offers[name] = o
	g.aggMu.Unlock()
	return o
}

// offerInputs identifies what an offer of p is made from: the profile,
// and each member's state and catalogue.
func (g *Gateway) offerInputs(p *registry.Profile, gen int, snap *supervisor.Snapshot) string {
	if p == nil {
		return fmt.Sprintf("none %d", gen)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", gen)
	for _, st := range g.profileMembers(p, snap) {
		cat := g.cats.of(st)
		fmt.Fprintf(&b, "|%s %s %v %p", st.Name, st.State, st.WaitsForClient, cat)
		if cat != nil {
			// A fresh list replaces a catalogue's slices, not the
			// catalogue the report made.
			fmt.Fprintf(&b, " %p %p %p", cat.Tools, cat.Prompts, cat.Resources)
		}
	}
	if g.opts.HeldTool != nil {
		fmt.Fprintf(&b, "|held %d", g.holdGen.Load())
	}
	return b.String()
}

// profileMembers are the configured servers profile p holds, in its order.
func (g *Gateway) profileMembers(p *registry.Profile, snap *supervisor.Snapshot) []*supervisor.ServerState {
	var out []*supervisor.ServerState
	byName := map[string]*supervisor.ServerState{}
	for i := range snap.Servers {
		st := &snap.Servers[i]
		if st.InstanceOf != "" || st.Server == nil {
			continue
		}
		byName[st.Name] = st
		if p.Servers == nil && p.Name == registry.DefaultProfile && !st.Server.Disabled {
			out = append(out, st)
		}
	}
	for _, n := range p.Servers {
		if st := byName[n]; st != nil {
			out = append(out, st)
		}
	}
	return out
}

// serves reports whether a server in state st is listed: it serves, is
// on its way, or waits for its first client. A server stopped by a
// person, failed or given up on is not.
func serves(st *supervisor.ServerState) (bool, string) {
	switch {
	case st.Server != nil && st.Server.Disabled:
		return false, "disabled"
	case st.WaitsForClient:
		return true, ""
	}
	switch st.State {
	case supervisor.StateStopped, supervisor.StateFailed, supervisor.StateCrashLooping, supervisor.StateSignIn, supervisor.StateStopping:
		return false, string(st.State)
	}
	return true, ""
}

// manyTools is a server's tool count past which the offer says clients
// may not load them all (several cap a session at about a hundred).
const manyTools = 500

// computeOffer makes profile name's offer: the one place the list of
// what an aggregate offers is decided.
func (g *Gateway) computeOffer(name string, p *registry.Profile, sep string, snap *supervisor.Snapshot) *offer {
	o := &offer{profile: name, toolRoutes: map[string]route{}, promptRoutes: map[string]route{}, uriRoutes: map[string]string{}}
	switch {
	case p == nil:
		o.err = fmt.Errorf("no profile named %q is configured", name)
		return o
	case p.Invalid != nil:
		o.err = fmt.Errorf("profile %s cannot be used: %v", name, p.Invalid)
		return o
	}
	b := &offerBuilder{g: g, o: o, name: name, p: p,
		toolNames:   namer{sep: sep, taken: map[string]string{}},
		promptNames: namer{sep: sep, taken: map[string]string{}},
		uriOwner:    map[string]string{},
		search:      p.EffectiveExposure() == registry.ExposureSearch,
		caps: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
	}
	for _, st := range g.profileMembers(p, snap) {
		o.members = append(o.members, b.addMember(st))
	}
	if b.search {
		o.search = searchtools.New(toolsearch.New(b.entries), callThroughSearch)
		o.tools = append(o.search.Tools(), o.tools...) // the pinned tools follow the three
	}
	o.caps = b.caps
	if len(b.instr) > 0 {
		o.instructions = fmt.Sprintf("mcptray profile %s: the tools, prompts and instructions of %d servers; names are SERVER%sNAME.\n\n", name, len(b.instr), sep) +
			strings.Join(b.instr, "\n\n")
	}
	o.toolsKey = listKey(o.tools)
	o.promptsKey = listKey(o.prompts)
	o.resourcesKey = listKey(o.resources) + listKey(o.templates)
	for _, n := range o.notices {
		g.opts.Logger.Info("aggregate", "profile", name, "notice", n)
	}
	return o
}

// offerBuilder is one computeOffer under way: the names taken so far, the
// owners of resource URIs, the search index's entries, the merged
// capabilities and instructions.
type offerBuilder struct {
	g                      *Gateway
	o                      *offer
	name                   string
	p                      *registry.Profile
	toolNames, promptNames namer
	uriOwner               map[string]string
	search                 bool
	entries                []toolsearch.Entry
	caps                   *mcp.ServerCapabilities
	instr                  []string
}

// addMember adds one server of the profile: its routes whenever its
// catalogue is known, and what it offers when it also serves.
func (b *offerBuilder) addMember(st *supervisor.ServerState) ProfileServer {
	m := ProfileServer{Name: st.Name, State: st.State}
	ok, why := serves(st)
	m.Why = why
	cat := b.g.cats.of(st)
	if cat == nil {
		return m
	}
	m.Catalogue = "live"
	if cat.fromDisk {
		m.Catalogue = "remembered"
	}
	m.Offered = ok
	b.g.observeTools(st.Name, cat.Tools)
	m.Tools = b.addTools(st.Name, cat.Tools, m.Offered)
	b.addPrompts(st.Name, cat.Prompts, m.Offered)
	b.addResources(st.Name, cat, m.Offered)
	if !m.Offered {
		return m
	}
	if m.Tools > manyTools && !b.search {
		b.o.notices = append(b.o.notices, fmt.Sprintf("server %s offers %d tools: clients may load only some; give profile %s an allow list (profiles.%s.tools.%s) or exposure = \"search\"",
			st.Name, m.Tools, b.name, registry.TOMLKey(b.name), registry.TOMLKey(st.Name)))
	}
	if c := cat.Capabilities; c != nil {
		if c.Resources != nil && c.Resources.Subscribe {
			b.caps.Resources.Subscribe = true
		}
		if c.Logging != nil {
			b.caps.Logging = &mcp.LoggingCapabilities{}
		}
		if c.Completions != nil {
			b.caps.Completions = &mcp.CompletionCapabilities{}
		}
	}
	if s := strings.TrimSpace(cat.Instructions); s != "" {
		b.instr = append(b.instr, "## "+st.Name+"\n\n"+s)
	}
	return m
}

// addTools routes a server's tools under their aggregate names and, when
// it is offered, lists those the profile shows; it returns how many are
// offered (listed or found through search).
func (b *offerBuilder) addTools(server string, tools []*mcp.Tool, offered bool) int {
	n := 0
	for _, t := range tools {
		name := b.toolNames.name(server, t.Name, &b.o.notices)
		r := route{server: server, name: t.Name}
		if !b.p.Allows(server, t.Name) {
			r.hidden = fmt.Sprintf("hidden by profile %s (profiles.%s.tools.%s)", b.name, registry.TOMLKey(b.name), registry.TOMLKey(server))
		} else if b.g.opts.HeldTool != nil {
			if why := b.g.opts.HeldTool(server, t); why != "" {
				r.hidden = "held: " + why
			}
		}
		b.o.toolRoutes[name] = r
		if !offered || r.hidden != "" {
			continue
		}
		n++
		b.entries = append(b.entries, toolsearch.Entry{Name: name, Server: server, Tool: t})
		if b.search && !b.p.Pinned(server, t.Name) {
			continue // found through search_tools, not listed
		}
		nt := *t
		nt.Name = name
		if nt.Title == "" {
			nt.Title = t.Name
		}
		b.o.tools = append(b.o.tools, &nt)
	}
	return n
}

// addPrompts routes a server's prompts and lists them when it is offered.
func (b *offerBuilder) addPrompts(server string, prompts []*mcp.Prompt, offered bool) {
	for _, pr := range prompts {
		n := b.promptNames.name(server, pr.Name, &b.o.notices)
		b.o.promptRoutes[n] = route{server: server, name: pr.Name}
		if offered {
			np := *pr
			np.Name = n
			b.o.prompts = append(b.o.prompts, &np)
		}
	}
}

// addResources routes a server's resources (the first server to offer a
// URI keeps it) and templates, and lists them when it is offered.
func (b *offerBuilder) addResources(server string, cat *catalogue, offered bool) {
	for _, r := range cat.Resources {
		if prev, dup := b.uriOwner[r.URI]; dup {
			b.o.notices = append(b.o.notices, fmt.Sprintf("resource %s is offered by %s and %s: reads go to %s", r.URI, prev, server, prev))
			continue
		}
		b.uriOwner[r.URI] = server
		b.o.uriRoutes[r.URI] = server
		if offered {
			b.o.resources = append(b.o.resources, r)
		}
	}
	for _, t := range cat.Templates {
		if tmpl, err := uritemplate.New(t.URITemplate); err == nil {
			b.o.tmplRoutes = append(b.o.tmplRoutes, templateRoute{server: server, tmpl: tmpl})
		}
		if offered {
			b.o.templates = append(b.o.templates, t)
		}
	}
}

func listKey(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// namer gives the names of one list of an aggregate: SERVER+sep+NAME when
// clients take it, else a shortened name with a hash of the original, and
// a name already taken gets the hashed form too.
type namer struct {
	sep   string
	taken map[string]string // name -> "server's tool", to say collisions
}

func (n *namer) name(server, orig string, notices *[]string) string {
	full := server + n.sep + orig
	name := full
	if !validToolName(full) {
		name = hashedName(full, server+"\x00"+orig)
		*notices = append(*notices, fmt.Sprintf("%s of %s is listed as %s: %q is not a name clients take (over %d characters, or characters other than letters, digits, '_' and '-')",
			orig, server, name, full, registry.MaxToolName))
	}
	if prev, dup := n.taken[name]; dup {
		again := hashedName(full, server+"\x00"+orig+"\x00again")
		for i := 2; n.taken[again] != ""; i++ {
			again = hashedName(full, fmt.Sprintf("%s\x00%s\x00%d", server, orig, i))
		}
		*notices = append(*notices, fmt.Sprintf("%s of %s and %s would both be %s: %s of %s is listed as %s", orig, server, prev, name, orig, server, again))
		name = again
	}
	n.taken[name] = orig + " of " + server
	return name
}

// validToolName is the rule clients check names with:
// ^[a-zA-Z0-9_-]{1,64}$.
func validToolName(s string) bool {
	if s == "" || len(s) > registry.MaxToolName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// hashedName is full made valid (other characters become '_') and cut to
// leave room for '_' and 8 hex digits of a hash of seed: the same server
// and tool always get the same name.
func hashedName(full, seed string) string {
	b := []byte(full)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	sum := sha256.Sum256([]byte(seed))
	h := hex.EncodeToString(sum[:4])
	keep := registry.MaxToolName - 1 - len(h)
	if len(b) > keep {
		b = b[:keep]
	}
	return string(b) + "_" + h
}

// routeURI is the server a resource URI is read from: the one that lists
// it, else the first whose template matches it.
func (o *offer) routeURI(uri string) (string, bool) {
	if s, ok := o.uriRoutes[uri]; ok {
		return s, true
	}
	for _, t := range o.tmplRoutes {
		if t.tmpl.Match(uri) != nil {
			return t.server, true
		}
	}
	return "", false
}

// routeName is where a namespaced tool or prompt goes; a name the lists
// do not hold (a server that is not listed now) is read as SERVER+sep+NAME
// for any server of the profile.
func (o *offer) routeName(routes map[string]route, name, sep string) (route, bool) {
	if r, ok := routes[name]; ok {
		return r, true
	}
	for _, m := range o.members {
		if rest, ok := strings.CutPrefix(name, m.Name+sep); ok && rest != "" {
			return route{server: m.Name, name: rest}, true
		}
	}
	// A server's own name (a client configured for the server alone, a
	// suite that knows its tools) reaches it when it is the only one of
	// the profile with that name.
	var found route
	n := 0
	for _, r := range routes {
		if r.name == name && r.hidden == "" {
			found = r
			n++
		}
	}
	if n == 1 {
		return found, true
	}
	return route{}, false
}

// memberNames lists the profile's servers.
func (o *offer) memberNames() []string {
	out := make([]string, 0, len(o.members))
	for _, m := range o.members {
		out = append(out, m.Name)
	}
	return slices.Clip(out)
}

// namesOf are the aggregate's names of the tools (or prompts) servers call
// name and the profile offers, sorted.
func (o *offer) namesOf(routes map[string]route, name string) []string {
	var out []string
	for n, r := range routes {
		if r.name == name && r.hidden == "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
