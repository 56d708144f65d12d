package gui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
	"mcptray/supervisor"
)

// thirtyServers is a daily config's snapshot: 27 ready, a missing command,
// one in backoff and one that never finishes its handshake (starting again
// after it went down).
func thirtyServers(latency time.Duration, next time.Time) supervisor.Snapshot {
	var snap supervisor.Snapshot
	for i := range 27 {
		s := supervisor.ServerState{Name: fmt.Sprintf("demo%02d", i+1), State: supervisor.StateReady, Server: &registry.Server{Command: "x"}}
		s.Probes.Count, s.Probes.Last = 5, latency
		snap.Servers = append(snap.Servers, s)
	}
	snap.Servers = append(snap.Servers,
		supervisor.ServerState{Name: "missing", State: supervisor.StateFailed, Server: &registry.Server{Command: "x"}},
		supervisor.ServerState{Name: "quitter", State: supervisor.StateBackoff, NextAttempt: next, Restarts: 2, Failures: 2, Server: &registry.Server{Command: "x"}},
		supervisor.ServerState{Name: "mute", State: supervisor.StateStarting, Restarts: 3, Failures: 3, Server: &registry.Server{Command: "x"}},
	)
	return snap
}

// TestTrayModelForManyServers: with 30 servers the top level holds Open,
// the counts, the problems, one submenu of the healthy servers, Stop all and
// Quit; and a snapshot that differs only in figures that move on their own
// (a probe's latency, a backoff's countdown) gives the same menu.
func TestTrayModelForManyServers(t *testing.T) {
	act := trayActions{stopAll: func() {}}
	now := time.Now()
	m := trayModel(thirtyServers(3*time.Millisecond, now.Add(3*time.Second)), nil, "", act)
	var top []string
	for _, n := range shownNodes(m) {
		top = append(top, n.label)
	}
	// A server being retried reads the same in backoff and starting again.
	want := []string{"Open mcptray", "27 ready · 1 failing · 2 retrying", "",
		"missing: failed", "quitter: retrying", "mute: retrying",
		"Healthy: 27 servers", "", "Check all now", "Reload config", "",
		"Stop all servers and quit", "Quit (servers keep running for your AI clients)"}
	if !slices.Equal(top, want) {
		t.Errorf("top level:\n%q\nwant\n%q", top, want)
	}
	if h := shownNodes(m)[6]; len(shownNodes(h.children)) != 27 || shownNodes(h.children)[0].label != "demo01: ready" {
		t.Errorf("healthy submenu: %d items, first %q", len(shownNodes(h.children)), shownNodes(h.children)[0].label)
	}
	later := trayModel(thirtyServers(9*time.Millisecond, now.Add(700*time.Millisecond)), nil, "", act)
	if a, b := fmt.Sprint(flatLabels(m)), fmt.Sprint(flatLabels(later)); a != b {
		t.Errorf("the menu changed with a latency and a countdown:\n%s\n%s", a, b)
	}
	if trayShape(m, "") != trayShape(later, "") {
		t.Error("the menu's shape changed")
	}
	// A server going from Start to Stop keeps its submenu's shape.
	stopped := thirtyServers(0, now)
	stopped.Servers[0].State = supervisor.StateStopped
	stopped.Servers[1].State = supervisor.StateStopped
	ready := thirtyServers(0, now)
	ready.Servers[0].State = supervisor.StateStopped
	if strings.Contains(trayShape(trayModel(stopped, nil, "", act), ""), "startstop") != true ||
		trayShape(trayModel(stopped, nil, "", act), "") != trayShape(trayModel(ready, nil, "", act), "") {
		t.Error("a server stopped or running changes the shape of the menu")
	}
}

// TestTrayShapeKeepsWhileServersChangePlace: a server becoming or ceasing
// to be a problem, a warning, tools held and Stop all coming and going
// change which items are shown, never the menu's shape (a new shape makes
// every item anew, with new ids, and a click in a host's menu read before
// is lost); only a change in the set of servers does.
func TestTrayShapeKeepsWhileServersChangePlace(t *testing.T) {
	now := time.Now()
	for _, n := range []int{3, 30} {
		base := thirtyServers(0, now)
		base.Servers = base.Servers[len(base.Servers)-n:]
		shape := trayShape(trayModel(base, nil, "", trayActions{}), "")
		healed := thirtyServers(0, now)
		healed.Servers = healed.Servers[len(healed.Servers)-n:]
		for i := range healed.Servers {
			healed.Servers[i].State, healed.Servers[i].Restarts, healed.Servers[i].Failures = supervisor.StateReady, 0, 0
		}
		broken := thirtyServers(0, now)
		broken.Servers = broken.Servers[len(broken.Servers)-n:]
		for i := range broken.Servers {
			broken.Servers[i].State = supervisor.StateFailed // all problems: past trayProblemsInline with 30
		}
		for name, m := range map[string][]trayNode{
			"every server ready":  trayModel(healed, nil, "", trayActions{}),
			"every server failed": trayModel(broken, nil, "", trayActions{}),
			"a warning, tools held and Stop all": trayModel(base, nil, "The daemon is not answering",
				trayActions{held: 2, stopAll: func() {}}),
		} {
			if got := trayShape(m, ""); got != shape {
				t.Errorf("%d servers, %s: the shape changed", n, name)
			}
		}
		// Each server is shown once, in its place.
		for name, snap := range map[string]supervisor.Snapshot{"base": base, "healed": healed, "broken": broken} {
			seen := map[string]int{}
			var count func([]trayNode)
			count = func(nodes []trayNode) {
				for _, n := range shownNodes(nodes) {
					if strings.Contains(n.key, ":") {
						seen[strings.SplitN(n.label, ":", 2)[0]]++
					}
					count(n.children)
				}
			}
			count(trayModel(snap, nil, "", trayActions{}))
			if len(seen) != n {
				t.Errorf("%d servers, %s: %d shown: %v", n, name, len(seen), seen)
			}
			for s, c := range seen {
				if c != 1 {
					t.Errorf("%d servers, %s: %s shown %d times", n, name, s, c)
				}
			}
		}
	}
	more := thirtyServers(0, now)
	for i := range more.Servers {
		more.Servers[i].State = supervisor.StateFailed
	}
	top := shownNodes(trayModel(more, nil, "", trayActions{}))
	if i := slices.IndexFunc(top, func(n trayNode) bool { return n.key == "more-problems" }); i < 0 ||
		top[i].label != "22 more problems" || len(shownNodes(top[i].children)) != 22 {
		t.Errorf("30 failing servers: no submenu of the 22 beyond the first %d: %q", trayProblemsInline, flatLabels(top))
	}
}

// shownNodes is the nodes a host shows.
func shownNodes(nodes []trayNode) []trayNode {
	return slices.DeleteFunc(slices.Clone(nodes), func(n trayNode) bool { return n.hidden })
}

func flatLabels(nodes []trayNode) []string {
	var out []string
	for _, n := range shownNodes(nodes) {
		out = append(out, n.label)
		out = append(out, flatLabels(n.children)...)
	}
	return out
}
