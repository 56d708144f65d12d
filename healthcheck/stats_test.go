package healthcheck

import (
	"errors"
	"testing"
	"time"
)

func TestProbeHistory(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name                   string
		record                 func(h *ProbeHistory)
		count, fails           int
		last, min, median, p95 time.Duration
		recent                 int
		lastError              string
	}{
		{"one probe", func(h *ProbeHistory) { h.Record(at, ms(7), nil) }, 1, 0, ms(7), ms(7), ms(7), ms(7), 1, ""},
		{"1..100 ms", func(h *ProbeHistory) {
			for i := 1; i <= 100; i++ {
				h.Record(at, ms(i), nil)
			}
		}, 100, 0, ms(100), ms(1), ms(50), ms(95), 100, ""},
		{"window keeps the last 100", func(h *ProbeHistory) {
			for i := 1; i <= 150; i++ {
				h.Record(at, ms(i), nil)
			}
		}, 150, 0, ms(150), ms(51), ms(100), ms(145), 100, ""},
		{"failures count up, success resets", func(h *ProbeHistory) {
			h.Record(at, ms(3), nil)
			h.Record(at, 0, errors.New("a"))
			h.Record(at, 0, errors.New("b"))
		}, 3, 2, ms(3), ms(3), ms(3), ms(3), 1, "b"},
		{"reset after failures", func(h *ProbeHistory) {
			h.Record(at, 0, errors.New("a"))
			h.Record(at, ms(4), nil)
		}, 2, 0, ms(4), ms(4), ms(4), ms(4), 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h ProbeHistory
			tt.record(&h)
			s := h.Stats()
			if s.Count != tt.count || s.ConsecutiveFailures != tt.fails || s.Last != tt.last || s.Min != tt.min ||
				s.Median != tt.median || s.P95 != tt.p95 || len(s.Recent) != tt.recent || s.LastError != tt.lastError || !s.LastAt.Equal(at) {
				t.Errorf("got %+v (recent %d)", s, len(s.Recent))
			}
		})
	}
}
