package registry

import (
	"slices"
	"strings"
	"testing"
)

const profileServers = `[servers.github]
command = "gh"

[servers.memory]
command = "mem"

[servers.off]
command = "off"
disabled = true
`

func TestProfiles(t *testing.T) {
	src := profileServers + `
[settings]
separator = "--"

[profiles.work]
servers = ["github", "memory"]
exposure = "search"

[profiles.work.tools.github]
allow = ["get_*", "list_?"]
deny = ["*delete*"]
pin = ["get_issue"]

[profiles.default.tools.memory]
deny = ["wipe"]
`
	cfg, err := Parse("servers.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range cfg.Diagnostics {
		t.Errorf("unexpected diagnostic: %s", d)
	}
	if got := cfg.Settings.NameSeparator(); got != "--" {
		t.Errorf("separator %q", got)
	}
	if got := cfg.ProfileNames(); !slices.Equal(got, []string{"default", "work"}) {
		t.Errorf("profile names %v", got)
	}
	work := cfg.Profile("work")
	if work == nil || work.Invalid != nil || work.EffectiveExposure() != ExposureSearch || !slices.Equal(work.Servers, []string{"github", "memory"}) {
		t.Fatalf("work: %+v", work)
	}
	for tool, want := range map[string]bool{"get_issue": true, "list_x": true, "list_xy": false, "get_delete_all": false, "create": false} {
		if got := work.Allows("github", tool); got != want {
			t.Errorf("work allows github %s = %v, want %v", tool, got, want)
		}
	}
	if !work.Allows("memory", "anything") || !work.Pinned("github", "get_issue") || work.Pinned("github", "get_pr") {
		t.Error("memory has no filter; get_issue alone is pinned")
	}
	def := cfg.Profile("default")
	var names []string
	for _, s := range cfg.ProfileServers(def) {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"github", "memory"}) || def.Allows("memory", "wipe") {
		t.Errorf("default holds every enabled server and keeps its filters: %v %+v", names, def)
	}
	// Without any [profiles], default still exists.
	bare, _ := Parse("s.toml", []byte(profileServers))
	if p := bare.Profile(DefaultProfile); p == nil || len(bare.ProfileServers(p)) != 2 || bare.Profile("work") != nil {
		t.Errorf("implicit default: %+v", p)
	}
	if bare.Settings.NameSeparator() != DefaultSeparator {
		t.Error("default separator")
	}
}

func TestProfileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, profiles string
		sev            Severity
		want           string // FILE:LINE:COL: message prefix
	}{
		{"unknown server", "[profiles.p]\nservers = [\"github\", \"githb\"]\n", SeverityError,
			`s.toml:12:22: profiles.p: no server named "githb" is configured (did you mean "github"?)`},
		{"unknown server on a later line", "[profiles.p]\nservers = [\n  \"memory\",\n  \"nope\",\n]\n", SeverityError,
			`s.toml:14:3: profiles.p: no server named "nope" is configured`},
		{"empty profile", "[profiles.p]\nservers = []\n", SeverityError,
			"s.toml:12:1: profiles.p: the profile holds no servers: servers is empty"},
		{"profile without servers", "[profiles.p]\nexposure = \"all\"\n", SeverityError,
			"s.toml:11:1: profiles.p: the profile holds no servers"},
		{"bad exposure", "[profiles.p]\nservers = [\"github\"]\nexposure = \"some\"\n", SeverityError,
			`s.toml:13:1: profiles.p: exposure must be "all"`},
		{"filter for a server not in the profile", "[profiles.p]\nservers = [\"github\"]\n[profiles.p.tools.memory]\ndeny = [\"x\"]\n", SeverityError,
			"s.toml:13:1: profiles.p: tools.memory: memory is not one of this profile's servers"},
		{"filter for an unknown server", "[profiles.p]\nservers = [\"github\"]\n[profiles.p.tools.nope]\ndeny = [\"x\"]\n", SeverityError,
			`s.toml:13:1: profiles.p: no server named "nope" is configured`},
		{"pattern not a list", "[profiles.p]\nservers = [\"github\"]\n[profiles.p.tools.github]\nallow = \"get_*\"\n", SeverityError,
			"s.toml:14:1: profiles.p: tools.github.allow must be an array of strings"},
		{"disabled server", "[profiles.p]\nservers = [\"off\"]\n", SeverityWarning,
			"s.toml:12:12: warning: profiles.p: server off is disabled"},
		{"bad separator character", "[settings]\nseparator = \".\"\n", SeverityError,
			`s.toml:12:1: settings.separator: "." holds '.': tool names clients take are letters, digits, '_' and '-' only`},
		{"empty separator", "[settings]\nseparator = \"\"\n", SeverityError,
			"s.toml:12:1: settings.separator: must not be empty"},
		{"separator too long", "[settings]\nseparator = \"" + strings.Repeat("_", 63) + "\"\n", SeverityError,
			"s.toml:12:1: settings.separator: is 63 characters"},
		{"unknown profile key", "[profiles.p]\nservers = [\"github\"]\nexpose = \"all\"\n", SeverityWarning,
			`s.toml:13:1: warning: unknown key "profiles.p.expose"`},
		{"bad profile name", "[profiles.\"a b\"]\nservers = [\"github\"]\n", SeverityError,
			`s.toml:11:1: profiles."a b": a profile's name must be`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := profileServers + "\n" + tc.profiles
			cfg, err := Parse("s.toml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range cfg.Diagnostics {
				if d.Severity == tc.sev {
					got = append(got, d.String())
				}
			}
			if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, tc.want) }) {
				t.Errorf("want a diagnostic starting %q, got %q", tc.want, got)
			}
			// A bad profile leaves the servers loaded and usable.
			if s := cfg.Server("github"); s == nil || !s.Valid() {
				t.Error("the servers must still load")
			}
			if tc.sev == SeverityError && strings.Contains(tc.profiles, "[profiles.") {
				for _, p := range cfg.Profiles {
					if p.Invalid == nil {
						t.Errorf("profile %s has an error but is not marked invalid", p.Name)
					}
				}
			}
		})
	}
}

func TestPatternWarnings(t *testing.T) {
	src := profileServers + `
[profiles.p]
servers = ["github", "memory"]

[profiles.p.tools.github]
allow = ["get_*", "nothing_*"]

[profiles.p.tools.memory]
deny = ["wipe"]
`
	cfg, err := Parse("s.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	catalogue := map[string][]string{"github": {"get_issue", "list_prs"}}
	ws := cfg.PatternWarnings(func(s string) ([]string, bool) { n, ok := catalogue[s]; return n, ok })
	if len(ws) != 1 {
		t.Fatalf("want one warning (memory's catalogue is unknown), got %v", ws)
	}
	if got, want := ws[0].String(), `s.toml:15:19: warning: profiles.p.tools.github.allow: "nothing_*" matches none of github's 2 tools`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"*", "anything", true}, {"get_*", "get_", true}, {"get_*", "get", false},
		{"?et", "get", true}, {"?et", "et", false}, {"a*b*c", "aXXbYYc", true}, {"a*b*c", "aXXbYY", false},
		{"[x]", "[x]", true}, {"[x]", "x", false}, {"*.*", "a.b", true}, {"ü*", "über", true}, {"", "", true}, {"", "a", false},
		{"**a", "bba", true}, {"*a*", "bbb", false},
	} {
		if got := Glob(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// FuzzGlob checks Glob against a plain recursive matcher.
func FuzzGlob(f *testing.F) {
	f.Add("a*b?c", "aXbYc")
	f.Add("**", "")
	f.Add("*?*", "x")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 40 || len(name) > 40 {
			return
		}
		if got, want := Glob(pattern, name), slowGlob([]rune(pattern), []rune(name)); got != want {
			t.Fatalf("Glob(%q, %q) = %v, want %v", pattern, name, got, want)
		}
	})
}

func slowGlob(p, n []rune) bool {
	if len(p) == 0 {
		return len(n) == 0
	}
	switch p[0] {
	case '*':
		return slowGlob(p[1:], n) || len(n) > 0 && slowGlob(p, n[1:])
	case '?':
		return len(n) > 0 && slowGlob(p[1:], n[1:])
	}
	return len(n) > 0 && n[0] == p[0] && slowGlob(p[1:], n[1:])
}

func TestCheckSeparator(t *testing.T) {
	for sep, ok := range map[string]bool{"__": true, "-": true, "_x_": true, "": false, ".": false, "/": false, " ": false, "é": false, strings.Repeat("-", 62): true, strings.Repeat("-", 63): false} {
		if err := CheckSeparator(sep); (err == nil) != ok {
			t.Errorf("CheckSeparator(%q) = %v", sep, err)
		}
	}
}

func TestProfilesKeptOnFreshEncode(t *testing.T) {
	src := profileServers + "\n[profiles.p]\nservers = [\"github\"]\n"
	cfg, err := Parse("s.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(cfg.Servers) // reordered: written afresh
	again, err := Parse("s.toml", Encode(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if p := again.Profile("p"); p == nil || !slices.Equal(p.Servers, []string{"github"}) {
		t.Errorf("profile lost:\n%s", Encode(cfg))
	}
}
