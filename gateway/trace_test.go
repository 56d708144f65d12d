package gateway

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"name":"login","arguments":{"user":"bob","password":"hunter2"}}`, `{"name":"login","arguments":{"user":"bob","password":"••••••"}}`},
		{`{"headers":{"Authorization":"Bearer abc"}}`, `{"headers":{"Authorization":"Bearer ••••••"}}`},
		{`{"api_key": "k-123", "progressToken":"p1"}`, `{"api_key":"••••••", "progressToken":"p1"}`},
		{`{"text":"the value sk-live-999 leaked"}`, `{"text":"the value •••••• leaked"}`},
		// A body cut inside a secret value is masked too.
		{`{"token":"abcdefghij`, `{"token":"••••••"`},
	} {
		if got := redact(tc.in, []string{"sk-live-999"}); got != tc.want {
			t.Errorf("redact(%s) = %s; want %s", tc.in, got, tc.want)
		}
	}
	long := `{"a":"` + strings.Repeat("x", 3*bodyLimit) + `"}`
	if got := redact(long, nil); len(got) > bodyLimit+len("…") {
		t.Errorf("a long body is kept at %d bytes", len(got))
	}
}
