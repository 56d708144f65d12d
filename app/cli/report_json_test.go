package cli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"mcptray/healthcheck"
	"mcptray/supervisor"
)

// TestServerReportEveryField fails when a field of the health check's
// report is added or dropped without `check --json` following: every
// field is set, and each must appear in the JSON under its own name.
func TestServerReportEveryField(t *testing.T) {
	rep := &healthcheck.Report{
		Era: healthcheck.EraLegacy, EraSource: "s", ProtocolVersion: "2025-11-25",
		ServerInfo: healthcheck.ServerInfo{Name: "n", Version: "v", Title: "t"}, Capabilities: json.RawMessage(`{"tools":{}}`),
		Instructions: "i", Tools: []healthcheck.Tool{{Name: "a"}}, Resources: []healthcheck.Resource{{URI: "u", Name: "n"}},
		ResourceTemplates: []healthcheck.ResourceTemplate{{URITemplate: "u/{x}", Name: "t"}}, Prompts: []healthcheck.Prompt{{Name: "p"}},
		ConnectLatency: 3 * time.Millisecond, Diagnoses: []healthcheck.Diagnosis{{Code: healthcheck.CodeStdoutNoise, Message: "m"}},
	}
	v := reflect.ValueOf(rep).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("Report.%s is not set here: set it, and show it in serverReport", v.Type().Field(i).Name)
		}
	}
	st := &supervisor.ServerState{Name: "x", State: supervisor.StateReady, Report: rep}
	data, _ := json.Marshal(newServerReport(st, false, time.Time{}))
	var got map[string]json.RawMessage
	json.Unmarshal(data, &got)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch f.Name {
		case "ConnectLatency":
			if !strings.Contains(string(got["latencyMs"]), `"connect":3`) {
				t.Errorf("connect latency: %s", got["latencyMs"])
			}
			continue
		}
		if v, ok := got[name]; !ok || string(v) == "null" || string(v) == "[]" || string(v) == `""` {
			t.Errorf("Report.%s is not in the report as %q: %s", f.Name, name, data)
		}
	}
}
