package quietlocale

import "testing"

func TestLanguageless(t *testing.T) {
	for v, want := range map[string]bool{
		"C.UTF-8": true, "POSIX.UTF-8": true, "C@euro": true, "C.utf8": true,
		"C": false, "POSIX": false, "en_US.UTF-8": false, "de_DE@euro": false, "Ca.UTF-8": false, "": false,
	} {
		if got := languageless(v); got != want {
			t.Errorf("languageless(%q) = %v, want %v", v, got, want)
		}
	}
}
