package schemaform

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/yosida95/uritemplate/v3"

	"mcptray/healthcheck"
)

// FieldKind is how a form asks for a value.
type FieldKind int

const (
	FieldText    FieldKind = iota // a string (Format may say which kind)
	FieldNumber                   // a number, within Min and Max
	FieldInteger                  // a whole number, within Min and Max
	FieldBool                     // true or false
	FieldChoice                   // one of Choices
	FieldChoices                  // an array of some of Choices
	FieldList                     // an array: each element is an Item
	FieldObject                   // an object: its Fields
	FieldJSON                     // any JSON value the schema allows (the form cannot show it as fields)
)

// Form is a form made from a JSON schema (a tool's input schema, an
// elicitation's requested schema): the fields a window shows, in order,
// and the schema the answers are checked against.
type Form struct {
	Fields []*Field
	// JSONOnly says why the form cannot show the schema as fields ("" when
	// it can): the arguments are then written as JSON.
	JSONOnly string
	schema   *healthcheck.Schema
}

// Field is one value a form asks for.
type Field struct {
	Name        string // the property; "" for the element of a list
	Title       string // what to call it: the schema's title, else the name
	Description string
	Required    bool
	Kind        FieldKind
	Format      string // of a string: email, uri, date, date-time…
	Choices     []Choice
	Min, Max    *float64
	// Default is the schema's default (HasDefault says whether it has one).
	Default    any
	HasDefault bool
	Fields     []*Field // FieldObject
	Item       *Field   // FieldList
	// Hint says in a few words what the field takes ("integer, 1 to 10",
	// "email", "JSON"), for beside the description.
	Hint string

	schema *jsonschema.Schema
	check  *healthcheck.Schema
}

// Choice is one value of an enum, with the words shown for it.
type Choice struct {
	Value any
	Title string
}

// formDepth bounds nesting: deeper objects are written as JSON.
const formDepth = 6

// NewForm makes the form of a schema as a server sent it. A nil or empty
// schema is a form with no fields.
func NewForm(schema any) (*Form, error) {
	s, err := healthcheck.ParseSchema(schema)
	if err != nil {
		return nil, err
	}
	f := &Form{schema: s}
	root := s.Root()
	if root == nil {
		return f, nil
	}
	if why := notAnObjectForm(root); why != "" {
		f.JSONOnly = why
		return f, nil
	}
	f.Fields = objectFields(root, propertyNames(s.Properties(), root), 0)
	return f, nil
}

// Check checks answers against the whole schema: an *healthcheck.ArgsError
// names the field.
func (f *Form) Check(v map[string]any) error {
	return f.schema.Check(v)
}

// Schema is the schema the form was made from (nil for none).
func (f *Form) Schema() *healthcheck.Schema { return f.schema }

// notAnObjectForm says why a root schema is not an object of named
// fields, or "".
func notAnObjectForm(root *jsonschema.Schema) string {
	if t := schemaTypes(root); len(t) > 0 && !slices.Equal(t, []string{"object"}) {
		return fmt.Sprintf("the arguments are %s, not an object", strings.Join(t, " or "))
	}
	switch {
	case root.Ref != "":
		return "the schema refers elsewhere ($ref)"
	case len(root.AnyOf) > 0 || len(root.OneOf) > 0:
		return "the schema offers alternatives (anyOf/oneOf)"
	case len(root.AllOf) > 0:
		return "the schema combines schemas (allOf)"
	case root.If != nil || root.Not != nil:
		return "the schema has conditions (if/not)"
	case len(root.Properties) == 0 && (root.AdditionalProperties != nil && root.AdditionalProperties.Not == nil || len(root.PatternProperties) > 0):
		return "the object takes names of its own (additionalProperties)"
	}
	return ""
}

// propertyNames orders properties: the required first, in the order the
// schema requires them, then the others in the schema's order. The SDK
// hands schemas over as maps, which forget the written order, and what a
// person must fill in is best asked first.
func propertyNames(all []string, s *jsonschema.Schema) []string {
	var out []string
	for _, r := range s.Required {
		if s.Properties[r] != nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, n := range all {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func objectFields(s *jsonschema.Schema, names []string, depth int) []*Field {
	var out []*Field
	for _, name := range names {
		p := s.Properties[name]
		if p == nil {
			continue
		}
		out = append(out, newField(name, p, slices.Contains(s.Required, name), depth))
	}
	return out
}

func sortedProperties(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// newField makes the field of a property (or of a list's element, name "").
func newField(name string, p *jsonschema.Schema, required bool, depth int) *Field {
	f := &Field{Name: name, Title: cmp.Or(p.Title, name), Description: p.Description, Required: required, schema: p, Format: p.Format}
	f.check, _ = healthcheck.ParseSchema(p)
	if p.Default != nil {
		var v any
		if json.Unmarshal(p.Default, &v) == nil {
			f.Default, f.HasDefault = v, true
		}
	}
	f.Min, f.Max = p.Minimum, p.Maximum
	types := slices.DeleteFunc(slices.Clone(schemaTypes(p)), func(t string) bool { return t == "null" })
	if len(types) == 0 {
		switch {
		case len(p.Properties) > 0:
			types = []string{"object"}
		case p.Items != nil:
			types = []string{"array"}
		}
	}
	if cs := ChoicesOf(p); len(cs) > 0 {
		f.Kind, f.Choices = FieldChoice, cs
		f.Hint = "one of " + strconv.Itoa(len(cs))
		return f
	}
	json := func(hint string) *Field {
		f.Kind, f.Hint = FieldJSON, hint
		return f
	}
	switch {
	case p.Ref != "" || len(p.AnyOf) > 0 || len(p.OneOf) > 0 || len(p.AllOf) > 0 || p.Not != nil || p.If != nil:
		return json("JSON (the schema has alternatives or conditions)")
	case len(types) == 0:
		return json("any JSON value")
	case len(types) > 1:
		return json("JSON: " + strings.Join(types, " or "))
	}
	switch types[0] {
	case "string":
		f.Kind = FieldText
		f.Hint = stringHint(p)
	case "integer", "number":
		f.Kind = FieldNumber
		if types[0] == "integer" {
			f.Kind = FieldInteger
		}
		f.Hint = types[0] + rangeText(p.Minimum, p.Maximum)
	case "boolean":
		f.Kind = FieldBool
	case "array":
		switch {
		case p.Items == nil || len(p.PrefixItems) > 0 || depth >= formDepth:
			return json("a JSON array")
		case len(ChoicesOf(p.Items)) > 0:
			f.Kind, f.Choices = FieldChoices, ChoicesOf(p.Items)
			f.Hint = "choose any"
		default:
			f.Kind = FieldList
			f.Item = newField("", p.Items, true, depth+1)
			f.Hint = "a list"
		}
		if p.MinItems != nil || p.MaxItems != nil {
			f.Hint += ", " + countText(p.MinItems, p.MaxItems)
		}
	case "object":
		if len(p.Properties) == 0 || depth >= formDepth {
			return json("a JSON object")
		}
		f.Kind = FieldObject
		f.Fields = objectFields(p, propertyNames(sortedProperties(p), p), depth+1)
	case "null":
		return json("null")
	default:
		return json("JSON")
	}
	return f
}

func stringHint(p *jsonschema.Schema) string {
	var parts []string
	if p.Format != "" {
		parts = append(parts, p.Format)
	}
	if p.MinLength != nil || p.MaxLength != nil {
		lo, hi := intPtrFloat(p.MinLength), intPtrFloat(p.MaxLength)
		parts = append(parts, strings.TrimPrefix(rangeText(lo, hi), ", ")+" characters")
	}
	if p.Pattern != "" {
		parts = append(parts, "matching "+p.Pattern)
	}
	return strings.Join(parts, ", ")
}

func intPtrFloat(n *int) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}

// rangeText is ", 1 to 10", ", at least 1", ", at most 10" or "".
func rangeText(lo, hi *float64) string {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case lo != nil && hi != nil:
		return ", " + g(*lo) + " to " + g(*hi)
	case lo != nil:
		return ", at least " + g(*lo)
	case hi != nil:
		return ", at most " + g(*hi)
	}
	return ""
}

func countText(lo, hi *int) string {
	return strings.TrimPrefix(rangeText(intPtrFloat(lo), intPtrFloat(hi)), ", ") + " items"
}

// Parse reads what a person typed into a text, number or JSON field as
// the field's value, and checks it against the field's schema. The error
// says what is wrong in plain words.
func (f *Field) Parse(text string) (any, error) {
	var v any
	var err error
	switch f.Kind {
	case FieldJSON, FieldObject, FieldList, FieldChoices:
		v, err = decodeFieldJSON(text)
	case FieldText:
		v = text
	case FieldInteger:
		n, perr := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if perr != nil {
			return nil, fmt.Errorf("%q is not a whole number", text)
		}
		v = float64(n)
	case FieldNumber:
		n, perr := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if perr != nil {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		v = n
	default:
		return nil, fmt.Errorf("%s is not typed", f.Title)
	}
	if err != nil {
		return nil, err
	}
	return v, f.CheckValue(v)
}

// CheckValue checks a value against the field's schema: its bounds and
// formats said plainly, then the rest of the schema.
func (f *Field) CheckValue(v any) error {
	if err := CheckLimits(f.schema, v); err != nil {
		return err
	}
	if f.check == nil {
		return nil
	}
	err := f.check.CheckValue(v)
	var ae *healthcheck.ArgsError
	if errors.As(err, &ae) && ae.Field == "" {
		return errors.New(ae.Why)
	}
	return err
}

func decodeFieldJSON(text string) (any, error) {
	v, err := healthcheck.DecodeJSON(text)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	return v, nil
}

// Text is a value as it is typed into the field (to fill a form again).
func (f *Field) Text(v any) string {
	switch f.Kind {
	case FieldText:
		if s, ok := v.(string); ok {
			return s
		}
	case FieldNumber, FieldInteger:
		if n, ok := v.(float64); ok {
			return strconv.FormatFloat(n, 'g', -1, 64)
		}
	}
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ChoiceIndex is the index in Choices of value v, or -1.
func (f *Field) ChoiceIndex(v any) int {
	return slices.IndexFunc(f.Choices, func(c Choice) bool { return sameJSON(c.Value, v) })
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func schemaTypes(p *jsonschema.Schema) []string {
	if p.Type != "" {
		return []string{p.Type}
	}
	return p.Types
}

// PromptForm is the form of a prompt's arguments (each a string).
func PromptForm(p healthcheck.Prompt) (*Form, error) {
	props := map[string]any{}
	var required, order []string
	for _, a := range p.Arguments {
		prop := map[string]any{"type": "string"}
		if a.Description != "" {
			prop["description"] = a.Description
		}
		props[a.Name] = prop
		order = append(order, a.Name)
		if a.Required {
			required = append(required, a.Name)
		}
	}
	return objectForm(props, order, required)
}

// TemplateForm is the form of a resource template's variables: one text
// field each, all required.
func TemplateForm(uriTemplate string) (*Form, error) {
	t, err := uritemplate.New(uriTemplate)
	if err != nil {
		return nil, fmt.Errorf("the URI template %q: %w", uriTemplate, err)
	}
	props := map[string]any{}
	names := t.Varnames()
	for _, n := range names {
		props[n] = map[string]any{"type": "string", "minLength": 1}
	}
	return objectForm(props, names, names)
}

// objectForm is the form of an object schema whose properties are written
// in order (the order a map forgets).
func objectForm(props map[string]any, order, required []string) (*Form, error) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, n := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		v, _ := json.Marshal(props[n])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":` + string(r))
	}
	b.WriteString(`}`)
	return NewForm(json.RawMessage(b.String()))
}

// ExpandTemplate fills a URI template (RFC 6570) with values.
func ExpandTemplate(uriTemplate string, values map[string]any) (string, error) {
	t, err := uritemplate.New(uriTemplate)
	if err != nil {
		return "", fmt.Errorf("the URI template %q: %w", uriTemplate, err)
	}
	vals := uritemplate.Values{}
	for k, v := range values {
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		vals.Set(k, uritemplate.String(s))
	}
	return t.Expand(vals)
}

// StringArgs turns a form's answers into a prompt's arguments.
func StringArgs(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		} else {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

// ChoicesOf is the values a schema allows, when it lists them: an enum
// (titled by enumNames), or alternatives of one const each.
func ChoicesOf(p *jsonschema.Schema) []Choice {
	var out []Choice
	if len(p.Enum) > 0 {
		var names []any
		if p.Extra != nil {
			names, _ = p.Extra["enumNames"].([]any)
		}
		for i, v := range p.Enum {
			c := Choice{Value: v, Title: fmt.Sprint(v)}
			if i < len(names) {
				c.Title = fmt.Sprintf("%v (%v)", names[i], v)
			}
			out = append(out, c)
		}
		return out
	}
	alts := p.OneOf
	if len(alts) == 0 {
		alts = p.AnyOf
	}
	for _, a := range alts {
		if a.Const != nil {
			t := fmt.Sprint(*a.Const)
			if a.Title != "" {
				t = fmt.Sprintf("%s (%v)", a.Title, *a.Const)
			}
			out = append(out, Choice{Value: *a.Const, Title: t})
		}
	}
	return out
}

// CheckLimits checks the bounds and formats of a field, saying plainly
// what is wrong (the validator's words are for programmers).
func CheckLimits(p *jsonschema.Schema, v any) error {
	switch v := v.(type) {
	case float64:
		if p.Minimum != nil && v < *p.Minimum {
			return fmt.Errorf("%g is below the minimum, %g", v, *p.Minimum)
		}
		if p.Maximum != nil && v > *p.Maximum {
			return fmt.Errorf("%g is above the maximum, %g", v, *p.Maximum)
		}
	case string:
		n := utf8.RuneCountInString(v)
		if p.MinLength != nil && n < *p.MinLength {
			return fmt.Errorf("at least %d characters, please", *p.MinLength)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return fmt.Errorf("at most %d characters, please", *p.MaxLength)
		}
		switch p.Format {
		case "email":
			if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
				return fmt.Errorf("%q is not an email address", v)
			}
		case "uri":
			if u, err := url.Parse(v); err != nil || u.Scheme == "" {
				return fmt.Errorf("%q is not a URI (scheme:…)", v)
			}
		case "date":
			if _, err := time.Parse(time.DateOnly, v); err != nil {
				return fmt.Errorf("%q is not a date (YYYY-MM-DD)", v)
			}
		case "date-time":
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				return fmt.Errorf("%q is not a date and time (RFC 3339, 2006-01-02T15:04:05Z)", v)
			}
		}
	case []any:
		if p.MinItems != nil && len(v) < *p.MinItems {
			return fmt.Errorf("choose at least %d", *p.MinItems)
		}
		if p.MaxItems != nil && len(v) > *p.MaxItems {
			return fmt.Errorf("choose at most %d", *p.MaxItems)
		}
	}
	return nil
}
