package healthcheck

import (
	"slices"
	"time"
)

// ProbeWindow is how many successful probes the latency figures cover.
const ProbeWindow = 100

// ProbeHistory folds probe results into ProbeStats: latency over the last
// ProbeWindow successful probes, and the run of consecutive failures. The
// zero value is ready. It is not safe for concurrent use: its owner (one
// health monitor) records and reads it.
type ProbeHistory struct {
	stats  ProbeStats
	recent []time.Duration // ring of the last ProbeWindow latencies, oldest first
}

// Record adds one probe's outcome, taken at at.
func (h *ProbeHistory) Record(at time.Time, took time.Duration, err error) {
	h.stats.Count++
	h.stats.LastAt = at
	if err != nil {
		h.stats.ConsecutiveFailures++
		h.stats.LastError = err.Error()
		return
	}
	h.stats.ConsecutiveFailures = 0
	h.stats.LastError = ""
	h.stats.Last = took
	if len(h.recent) == ProbeWindow {
		h.recent = slices.Delete(h.recent, 0, 1)
	}
	h.recent = append(h.recent, took)
	sorted := slices.Sorted(slices.Values(h.recent))
	h.stats.Min = sorted[0]
	h.stats.Median = Percentile(sorted, 50)
	h.stats.P95 = Percentile(sorted, 95)
}

// ResetFailures forgets the run of consecutive failures (the latency
// history stays): a new process or connection starts with a clean slate.
func (h *ProbeHistory) ResetFailures() {
	h.stats.ConsecutiveFailures = 0
	h.stats.LastError = ""
}

// Stats returns a copy the caller owns.
func (h *ProbeHistory) Stats() ProbeStats {
	s := h.stats
	s.Recent = slices.Clone(h.recent)
	return s
}

// Percentile is the nearest-rank percentile of sorted (non-empty): the one
// percentile of probe latencies and of the gateway's relayed requests.
func Percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}
