package gateway

import (
	"testing"
	"time"

	"mcptray/healthcheck"
)

// TestUsagePercentilesAreNearestRank: the gateway's p50/p95 are the probe
// statistics' percentiles (healthcheck.Percentile), not an index of their
// own: of 1…10 ms, p95 is 10 ms.
func TestUsagePercentilesAreNearestRank(t *testing.T) {
	s := &stats{methods: map[string]*Count{}, tools: map[string]*Count{}}
	var sorted []time.Duration
	for i := 1; i <= 10; i++ {
		d := time.Duration(i) * time.Millisecond
		s.record("tools/call", "echo", d, false, false)
		sorted = append(sorted, d)
	}
	u := s.usage()
	if u.P50 != 5*time.Millisecond || u.P95 != 10*time.Millisecond || u.Sampled != 10 {
		t.Errorf("p50 %s, p95 %s of %d, want 5ms and 10ms of 10", u.P50, u.P95, u.Sampled)
	}
	if u.P95 != healthcheck.Percentile(sorted, 95) {
		t.Errorf("p95 %s, the probes' rule says %s", u.P95, healthcheck.Percentile(sorted, 95))
	}
}
