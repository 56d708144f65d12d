package cli

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"mcptray/app"
)

// TestLaunchdAgent reads the launchd agent back as a plist: the label, the
// command with its arguments (escaped), start at login, restart after a
// failure only, logs in the user's Library; and it is the text the service
// install hands kardianos/service.
func TestLaunchdAgent(t *testing.T) {
	exe := "/Applications/mcp & tray.app/Contents/MacOS/mcptray"
	cfg := "/Users/me/Library/Application Support/mcptray/servers <{{x}}>.toml"
	text := launchdAgent(exe, []string{"daemon", "--service", "--config", cfg}, "/Users/me")
	if strings.Contains(text, "{{") {
		t.Errorf("template markers left for kardianos/service to read:\n%s", text)
	}
	var p struct {
		Dict struct {
			Items []struct {
				XMLName xml.Name
				Text    string   `xml:",chardata"`
				Strings []string `xml:"string"`
				Inner   string   `xml:",innerxml"`
			} `xml:",any"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal([]byte(text), &p); err != nil {
		t.Fatalf("not XML: %v\n%s", err, text)
	}
	got := map[string]string{}
	var args []string
	for i := 0; i+1 < len(p.Dict.Items); i += 2 {
		k, v := p.Dict.Items[i], p.Dict.Items[i+1]
		if k.XMLName.Local != "key" {
			t.Fatalf("item %d is <%s>, not a key", i, k.XMLName.Local)
		}
		switch v.XMLName.Local {
		case "array":
			args = v.Strings
		case "dict", "true", "false":
			got[k.Text] = v.XMLName.Local + ":" + strings.Join(strings.Fields(v.Inner), "")
		default:
			got[k.Text] = v.Text
		}
	}
	for k, want := range map[string]string{
		"Label":             "mcptray",
		"RunAtLoad":         "true:",
		"KeepAlive":         "dict:<key>SuccessfulExit</key><false/>",
		"StandardErrorPath": "/Users/me/Library/Logs/mcptray-daemon.log",
		"StandardOutPath":   "/Users/me/Library/Logs/mcptray-daemon.log",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if want := []string{exe, "daemon", "--service", "--config", cfg}; !slices.Equal(args, want) {
		t.Errorf("ProgramArguments %q, want %q", args, want)
	}

	env := &app.Env{Exe: "/usr/local/bin/mcptray"}
	c := serviceConfig(env, "/Users/me/servers.toml")
	if s, _ := c.Option["LaunchdConfig"].(string); !strings.Contains(s, "<string>/Users/me/servers.toml</string>") ||
		!strings.Contains(s, "<string>/usr/local/bin/mcptray</string>") {
		t.Errorf("the service config does not carry the agent:\n%s", s)
	}
}
