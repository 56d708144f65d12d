package gateway

import (
	"slices"
	"sort"
	"sync"
	"time"

	"mcptray/healthcheck"
)

// latencyWindow is how many recent requests the percentiles are of.
const latencyWindow = 1024

// stats counts a server's relayed requests: per method and per tool, and
// the latency of the recent ones.
type stats struct {
	mu      sync.Mutex // protects the fields below
	methods map[string]*Count
	tools   map[string]*Count
	recent  []time.Duration // ring of the last latencyWindow
	next    int
}

// Count is how many requests of one kind were relayed, and how they went.
type Count struct {
	Calls     int `json:"calls"`
	Errors    int `json:"errors"`
	Cancelled int `json:"cancelled,omitempty"`
}

func (s *stats) record(method, tool string, d time.Duration, failed, cancelled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.methods == nil {
		s.methods, s.tools = map[string]*Count{}, map[string]*Count{}
	}
	bump := func(m map[string]*Count, k string) {
		c := m[k]
		if c == nil {
			c = &Count{}
			m[k] = c
		}
		c.Calls++
		if failed {
			c.Errors++
		}
		if cancelled {
			c.Cancelled++
		}
	}
	bump(s.methods, method)
	if tool != "" {
		bump(s.tools, tool)
	}
	if len(s.recent) < latencyWindow {
		s.recent = append(s.recent, d)
	} else {
		s.recent[s.next] = d
		s.next = (s.next + 1) % latencyWindow
	}
}

// Usage is a server's relayed requests: counts, and the latency of real
// client requests (the round trip through the gateway to the server).
type Usage struct {
	Methods map[string]Count `json:"methods,omitempty"`
	Tools   map[string]Count `json:"tools,omitempty"`
	// P50 and P95 are of the last requests (up to 1024); zero with none.
	P50     time.Duration `json:"p50"`
	P95     time.Duration `json:"p95"`
	Sampled int           `json:"sampled"`
}

func (s *stats) usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := Usage{Methods: map[string]Count{}, Tools: map[string]Count{}}
	for k, c := range s.methods {
		u.Methods[k] = *c
	}
	for k, c := range s.tools {
		u.Tools[k] = *c
	}
	if n := len(s.recent); n > 0 {
		d := slices.Clone(s.recent)
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		u.P50, u.P95, u.Sampled = healthcheck.Percentile(d, 50), healthcheck.Percentile(d, 95), n
	}
	return u
}
