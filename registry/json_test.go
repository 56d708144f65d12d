package registry

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullServer has every field of Server set (see TestServerJSONEveryField).
func fullServer() []*Server {
	return []*Server{
		{Name: "local", Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"K": "v", "T": "${env:T}"}, Cwd: "~/p",
			Autostart: true, Restart: RestartAlways, Disabled: true, Description: "d", Source: "registry:io.github.x/local@1.0.0", Line: 7,
			Invalid: &ServerError{Server: "local", Field: "cwd", Message: "bad"}},
		{Name: "remote", URL: "https://x/mcp", TransportName: TransportSSE, Headers: map[string]string{"Authorization": "Bearer t"},
			Restart: RestartNever, Line: 12, Start: StartLazy, IdleStop: 10 * time.Minute, Unshared: true},
	}
}

// TestServerJSONEveryField fails when a field of Server is added or dropped
// without the JSON shape following: every field is set in fullServer, and
// each must survive the round trip and show in the JSON.
func TestServerJSONEveryField(t *testing.T) {
	set := map[string]bool{}
	for _, s := range fullServer() {
		v := reflect.ValueOf(s).Elem()
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set[v.Type().Field(i).Name] = true
			}
		}
	}
	for i := range reflect.TypeFor[Server]().NumField() {
		if f := reflect.TypeFor[Server]().Field(i); !set[f.Name] {
			t.Errorf("Server.%s is set in no server of fullServer: set it there and carry it in ServerJSON", f.Name)
		}
	}
	seen := map[string]bool{}
	for _, s := range fullServer() {
		data, err := json.Marshal(s.JSON())
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		for k := range m {
			seen[k] = true
		}
		var j ServerJSON
		if err := json.Unmarshal(data, &j); err != nil {
			t.Fatal(err)
		}
		back := j.Server()
		if back.Invalid != nil || s.Invalid != nil {
			if back.Invalid == nil || s.Invalid == nil || back.Invalid.Error() != s.Invalid.Error() {
				t.Errorf("%s: Invalid %v, want %v", s.Name, back.Invalid, s.Invalid)
			}
			back.Invalid = s.Invalid
		}
		if !reflect.DeepEqual(back, s) {
			t.Errorf("round trip of %s:\n got %+v\nwant %+v\n%s", s.Name, back, s, data)
		}
	}
	for i := range reflect.TypeFor[ServerJSON]().NumField() {
		tag, _, _ := strings.Cut(reflect.TypeFor[ServerJSON]().Field(i).Tag.Get("json"), ",")
		if !seen[tag] {
			t.Errorf("%q never appears in the JSON of fullServer", tag)
		}
	}
}

func TestServerJSONMasksAndDefaults(t *testing.T) {
	s := &Server{Name: "r", URL: "https://x", Headers: map[string]string{"A": "secret"}, Env: map[string]string{"E": "s2"}}
	j := s.Redacted().JSON()
	if j.Headers["A"] != Masked || j.Env["E"] != Masked || s.Headers["A"] != "secret" {
		t.Errorf("mask: %+v (original %+v)", j, s.Headers)
	}
	if j.Transport != TransportHTTP || j.Restart != RestartOnFailure || j.Kind != "remote" || !j.Valid {
		t.Errorf("effective values: %+v", j)
	}
	if back := j.Server(); back.TransportName != "" || back.Restart != "" {
		t.Errorf("defaults come back as set: %+v", back)
	}
}
