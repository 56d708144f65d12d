package main

import (
	"encoding/xml"
	"os"
	"strings"
	"testing"
	"text/template"
)

// TestMergeFragment merges packaging/Info.plist.fragment into the
// Info.plist fyne package (fyne.io/tools v1.7.4) writes for mcptray, and
// reads the result back as a plist: the app is a menu-bar app with no Dock
// icon (LSUIElement), every key is there once, fyne's other keys are kept.
func TestMergeFragment(t *testing.T) {
	tmpl := template.Must(template.ParseFiles("testdata/fyne-Info.plist.tmpl"))
	var b strings.Builder
	if err := tmpl.Execute(&b, map[string]any{"Name": "mcptray", "ExeName": "mcptray", "AppID": "dev.mcptray.app",
		"Version": "0.1.0", "Build": 1, "Category": "developer-tools"}); err != nil {
		t.Fatal(err)
	}
	frag, err := os.ReadFile("../Info.plist.fragment")
	if err != nil {
		t.Fatal(err)
	}
	out, err := merge([]byte(b.String()), frag)
	if err != nil {
		t.Fatal(err)
	}
	got := dict(t, out)
	for k, want := range map[string]string{
		"LSUIElement":            "true",
		"LSMinimumSystemVersion": "11.0",
		"CFBundleIdentifier":     "dev.mcptray.app",
		"CFBundleExecutable":     "mcptray",
		"CFBundleIconFile":       "icon.icns",
	} {
		if len(got[k]) != 1 || got[k][0] != want {
			t.Errorf("%s = %q, want [%s]\n%s", k, got[k], want, out)
		}
	}
	// Merging twice changes nothing.
	again, err := merge(out, frag)
	if err != nil || string(again) != string(out) {
		t.Errorf("second merge differs (%v):\n%s", err, again)
	}
}

func TestMergeErrors(t *testing.T) {
	for _, frag := range []string{"<key>A</key>", "<true/>", "<key>A</key><string>x"} {
		if _, err := merge([]byte("<plist><dict></dict></plist>"), []byte(frag)); err == nil {
			t.Errorf("fragment %q accepted", frag)
		}
	}
}

// dict reads a plist's top dict: key → its values (element name for
// <true/>/<false/>, else the text).
func dict(t *testing.T, doc []byte) map[string][]string {
	t.Helper()
	var p struct {
		Dict struct {
			Items []struct {
				XMLName xml.Name
				Text    string `xml:",chardata"`
			} `xml:",any"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(doc, &p); err != nil {
		t.Fatalf("not a plist: %v\n%s", err, doc)
	}
	m := map[string][]string{}
	var key string
	for _, it := range p.Dict.Items {
		switch it.XMLName.Local {
		case "key":
			key = it.Text
		case "true", "false":
			m[key] = append(m[key], it.XMLName.Local)
		default:
			m[key] = append(m[key], strings.TrimSpace(it.Text))
		}
	}
	return m
}
