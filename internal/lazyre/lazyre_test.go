package lazyre

import "testing"

func TestNewCompilesOnceAtFirstUse(t *testing.T) {
	re := New(`^a+b$`)
	if first, again := re(), re(); first != again {
		t.Error("a second use compiled the pattern again")
	}
	if !re().MatchString("aab") || re().MatchString("b") {
		t.Error("the pattern does not match as written")
	}
	bad := New(`(`) // does not compile: only a use says so
	defer func() {
		if recover() == nil {
			t.Error("a pattern that does not compile did not panic at first use")
		}
	}()
	bad()
}
