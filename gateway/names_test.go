package gateway

import (
	"strings"
	"testing"
)

func TestAggregateNames(t *testing.T) {
	var notices []string
	n := namer{sep: "__", taken: map[string]string{}}
	long := strings.Repeat("x", 70)
	for _, tc := range []struct {
		server, tool, want string
	}{
		{"github", "create_issue", "github__create_issue"},
		{"a", "b", "a__b"},
		{"fs", "read.file", hashedName("fs__read.file", "fs\x00read.file")},
		{"srv", long, hashedName("srv__"+long, "srv\x00"+long)},
	} {
		got := n.name(tc.server, tc.tool, &notices)
		if got != tc.want || !validToolName(got) {
			t.Errorf("name(%s, %s) = %q, want %q (valid: %v)", tc.server, tc.tool, got, tc.want, validToolName(got))
		}
	}
	if len(notices) != 2 || !strings.Contains(notices[0], "read.file of fs is listed as fs__read_file_") {
		t.Errorf("shortened names are said: %q", notices)
	}
	// The same input gives the same name in every run.
	again := namer{sep: "__", taken: map[string]string{}}
	if a, b := again.name("srv", long, new([]string)), hashedName("srv__"+long, "srv\x00"+long); a != b || len(a) != 64 {
		t.Errorf("deterministic shortening: %q %q (%d)", a, b, len(a))
	}
	// Collisions: "a__b" + "c" and "a" + "b__c" meet at a__b__c.
	notices = nil
	c := namer{sep: "__", taken: map[string]string{}}
	first := c.name("a__b", "c", &notices)
	second := c.name("a", "b__c", &notices)
	if first != "a__b__c" || second == first || !validToolName(second) {
		t.Errorf("collision: %q %q", first, second)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "would both be a__b__c") {
		t.Errorf("a collision is said: %q", notices)
	}
	// Names that collide after shortening keep distinct names.
	d := namer{sep: "__", taken: map[string]string{}}
	seen := map[string]bool{}
	for i := range 200 {
		name := d.name("s", strings.Repeat("t", 80)+string(rune('a'+i%26))+strings.Repeat("u", i), new([]string))
		if seen[name] || !validToolName(name) {
			t.Fatalf("name %q repeated or invalid", name)
		}
		seen[name] = true
	}
}
