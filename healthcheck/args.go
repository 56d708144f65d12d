package healthcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"mcptray/internal/lazyre"
	"mcptray/registry"
)

// ArgsError is arguments that do not fit a schema: which field, and why.
// Nothing was sent.
type ArgsError struct {
	Field string // dotted path ("a", "options.depth"); "" for the whole object
	Why   string
}

func (e *ArgsError) Error() string {
	if e.Field == "" {
		return e.Why
	}
	return fmt.Sprintf("argument %s: %s", e.Field, e.Why)
}

// UnknownError is a name the server does not offer, with the nearest ones
// it does.
type UnknownError struct {
	What    string // "tool", "prompt"
	Name    string
	Nearest []string // the closest names, best first; empty when none is close
	All     int      // how many the server offers
}

func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("the server has no %s named %q", e.What, e.Name)
	switch {
	case len(e.Nearest) > 0:
		msg += "; did you mean " + strings.Join(e.Nearest, ", ") + "?"
	case e.All == 0:
		msg += fmt.Sprintf(" (it offers no %ss)", e.What)
	}
	return msg
}

// Unknown is the error for a name (of kind what: "tool", "prompt") that
// is not among names (sorted, as offered): it names the nearest ones.
func Unknown(what, name string, names []string) *UnknownError {
	return &UnknownError{What: what, Name: name, Nearest: nearest(name, names), All: len(names)}
}

// nearest returns up to three names close to name: those it is a part of
// (or that are part of it), then those a few edits away, best first.
func nearest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	lname := strings.ToLower(name)
	for _, n := range names {
		ln := strings.ToLower(n)
		d := registry.EditDistance(lname, ln)
		switch {
		case strings.Contains(ln, lname) || strings.Contains(lname, ln):
			d = min(d, 1)
		case d > max(2, len(name)/3):
			continue
		}
		cs = append(cs, cand{n, d})
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// Schema is a JSON schema read from a server, resolved for validation.
type Schema struct {
	raw      *jsonschema.Schema
	resolved *jsonschema.Resolved
}

// ParseSchema reads a schema as a server sent it (an input, output or
// elicitation schema). A schema the validator cannot resolve is an error.
func ParseSchema(v any) (*Schema, error) {
	var data []byte
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		data = v
	case []byte:
		data = v
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(data)) == 0 || string(data) == "null" {
		return nil, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("the schema does not parse: %w", err)
	}
	s.PropertyOrder = propertyOrder(data)
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return nil, fmt.Errorf("the schema cannot be used: %w", err)
	}
	return &Schema{raw: &s, resolved: r}, nil
}

// Properties are the top-level properties, in the order the schema lists
// them.
func (s *Schema) Properties() []string {
	if s == nil {
		return nil
	}
	out := slices.Clone(s.raw.PropertyOrder)
	for _, k := range slices.Sorted(maps.Keys(s.raw.Properties)) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// propertyOrder reads the names of a schema's top-level properties in the
// order written (a map forgets it, and a person filling a form expects
// the server's order).
func propertyOrder(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "properties" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil
		}
		var names []string
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return names
			}
			n, _ := name.(string)
			names = append(names, n)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return names
			}
		}
		return names
	}
	return nil
}

// Property is the schema of a top-level property, or nil.
func (s *Schema) Property(name string) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	return s.raw.Properties[name]
}

// Root is the schema itself.
func (s *Schema) Root() *jsonschema.Schema {
	if s == nil {
		return nil
	}
	return s.raw
}

// ToolArgs builds a tool's arguments: jsonArgs (a JSON object, may be "")
// with each "key=value" of kv set on top, the value typed by the
// property's schema (a number, a boolean, JSON for arrays and objects; an
// array of scalars may also be written a,b,c). Then it checks the whole
// against the schema. Errors are *ArgsError.
func (s *Schema) ToolArgs(jsonArgs string, kv []string) (map[string]any, error) {
	args := map[string]any{}
	if strings.TrimSpace(jsonArgs) != "" {
		dec := json.NewDecoder(strings.NewReader(jsonArgs))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, &ArgsError{Why: fmt.Sprintf("the JSON arguments do not parse: %v", err)}
		}
		if dec.More() {
			return nil, &ArgsError{Why: "the JSON arguments hold more than one value"}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &ArgsError{Why: fmt.Sprintf("the JSON arguments must be an object ({\"name\": value, …}), not %s", jsonKind(v))}
		}
		args = numbersToFloat(m).(map[string]any)
	}
	for _, a := range kv {
		key, text, ok := strings.Cut(a, "=")
		if !ok || key == "" {
			return nil, &ArgsError{Why: fmt.Sprintf("--arg %q wants key=value", a)}
		}
		prop := s.Property(key)
		if prop == nil && s != nil && len(s.raw.Properties) > 0 && closed(s.raw) {
			return nil, &ArgsError{Field: key, Why: "the tool takes no such argument" + takes(s.Properties())}
		}
		v, err := typedValue(prop, text)
		if err != nil {
			return nil, &ArgsError{Field: key, Why: err.Error()}
		}
		args[key] = v
	}
	return args, s.Check(args)
}

// Check validates v against the schema; nil schema accepts anything.
// The error is an *ArgsError naming the field.
func (s *Schema) Check(v map[string]any) error {
	if s == nil {
		return nil
	}
	root := s.raw
	// The common mistakes, said plainly; the validator covers the rest.
	for _, name := range root.Required {
		if _, ok := v[name]; !ok {
			why := "is required"
			if p := root.Properties[name]; p != nil && p.Description != "" {
				why += " (" + firstLine(p.Description) + ")"
			}
			return &ArgsError{Field: name, Why: why}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(v)) {
		p := root.Properties[name]
		if p == nil {
			if closed(root) {
				return &ArgsError{Field: name, Why: "the tool takes no such argument" + takes(s.Properties())}
			}
			continue
		}
		if want := schemaTypes(p); len(want) > 0 && !slices.ContainsFunc(want, func(t string) bool { return hasType(v[name], t) }) {
			return &ArgsError{Field: name, Why: fmt.Sprintf("must be %s, not %s", strings.Join(want, " or "), jsonKind(v[name]))}
		}
		if len(p.Enum) > 0 && !slices.ContainsFunc(p.Enum, func(e any) bool { return jsonEqual(e, v[name]) }) {
			return &ArgsError{Field: name, Why: fmt.Sprintf("must be one of %s", enumText(p.Enum))}
		}
	}
	if err := s.resolved.Validate(v); err != nil {
		return validationError(err)
	}
	return nil
}

// CheckValue validates any JSON value (structured content).
func (s *Schema) CheckValue(v any) error {
	if s == nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok {
		return s.Check(m)
	}
	if err := s.resolved.Validate(v); err != nil {
		return validationError(err)
	}
	return nil
}

var schemaPathRE = lazyre.New(`validating (/[^:]*): `)

// validationError turns the validator's "validating root: validating
// /properties/o: validating /properties/o/properties/x: minimum: …" into
// the field (o.x) and the last reason.
func validationError(err error) error {
	msg := err.Error()
	field := ""
	if ms := schemaPathRE().FindAllStringSubmatchIndex(msg, -1); len(ms) > 0 {
		last := ms[len(ms)-1]
		path := msg[last[2]:last[3]]
		msg = msg[last[1]:]
		var parts []string
		segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i := 0; i+1 < len(segs); i++ {
			if segs[i] == "properties" {
				parts = append(parts, segs[i+1])
				i++
			} else if segs[i] == "items" {
				parts = append(parts, "[]")
			}
		}
		field = strings.ReplaceAll(strings.Join(parts, "."), ".[]", "[]")
	} else {
		msg = strings.TrimPrefix(msg, "validating root: ")
	}
	return &ArgsError{Field: field, Why: msg}
}

// closed reports a schema that allows no properties beyond its own.
func closed(s *jsonschema.Schema) bool {
	return s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil
}

func takes(names []string) string {
	if len(names) == 0 {
		return " (it takes none)"
	}
	return " (it takes " + strings.Join(names, ", ") + ")"
}

func schemaTypes(p *jsonschema.Schema) []string {
	if p.Type != "" {
		return []string{p.Type}
	}
	return p.Types
}

// typedValue reads a --arg value as the property's type wants it.
func typedValue(p *jsonschema.Schema, text string) (any, error) {
	types := []string(nil)
	if p != nil {
		types = schemaTypes(p)
	}
	if len(types) == 1 {
		switch types[0] {
		case "string":
			return text, nil
		case "integer":
			n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", text)
			}
			return float64(n), nil
		case "number":
			f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", text)
			}
			return f, nil
		case "boolean":
			b, err := strconv.ParseBool(strings.TrimSpace(text))
			if err != nil {
				return nil, fmt.Errorf("%q is not true or false", text)
			}
			return b, nil
		case "null":
			if text != "null" {
				return nil, fmt.Errorf("must be null")
			}
			return nil, nil
		case "array":
			if v, err := DecodeJSON(text); err == nil {
				return v, nil
			}
			if p.Items != nil && slices.ContainsFunc(schemaTypes(p.Items), func(t string) bool { return t == "object" || t == "array" }) {
				return nil, fmt.Errorf("%q is not a JSON array", text)
			}
			out := []any{}
			if text == "" {
				return out, nil
			}
			for _, part := range strings.Split(text, ",") {
				v, err := typedValue(p.Items, strings.TrimSpace(part))
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			return out, nil
		case "object":
			v, err := DecodeJSON(text)
			if err != nil {
				return nil, fmt.Errorf("wants a JSON object: %v", err)
			}
			return v, nil
		}
	}
	// No single type: JSON when it is JSON (and a type allows it), else text.
	if v, err := DecodeJSON(text); err == nil && (len(types) == 0 || slices.ContainsFunc(types, func(t string) bool { return hasType(v, t) })) {
		return v, nil
	}
	return text, nil
}

// DecodeJSON reads one JSON value, its numbers as float64 (as
// encoding/json decodes them, and the validator expects).
func DecodeJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return numbersToFloat(v), nil
}

// numbersToFloat turns json.Number into float64, as encoding/json decodes
// numbers, so the validator sees the usual types.
func numbersToFloat(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = numbersToFloat(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbersToFloat(x)
		}
	}
	return v
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func enumText(vals []any) string {
	var parts []string
	for _, v := range vals {
		b, _ := json.Marshal(v)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ", ")
}
