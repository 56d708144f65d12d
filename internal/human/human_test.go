package human

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                          "0s",
		0:                                     "0s",
		123456 * time.Microsecond:             "123ms",
		3240 * time.Millisecond:               "3.2s",
		3 * time.Second:                       "3s",
		5*time.Minute + 3400*time.Millisecond: "5m3s",
		2*time.Hour + 5*time.Minute + 3*time.Second: "2h5m3s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
