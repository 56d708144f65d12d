package gui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
	"mcptray/app/schemaform"
)

// schemaForm shows an schemaform.Form (a tool's input schema, an elicitation's
// requested schema) as fields, or as a JSON editor: for a schema the
// fields cannot express, or when the person switches to it.
type schemaForm struct {
	form    *schemaform.Form
	root    *objectInput // nil when the schema has no fields to show
	json    *widget.Entry
	mode    *widget.RadioGroup // modeForm or modeJSON; nil when JSON is the only way
	note    *widget.Label      // why the form is JSON only, or that it takes nothing
	problem *widget.Label      // what is wrong with the answers, in red
	fields  *fyne.Container
	content *fyne.Container
}

const (
	modeForm = "Form"
	modeJSON = "JSON"
)

func newSchemaForm(f *schemaform.Form) *schemaForm {
	s := &schemaForm{form: f}
	s.json = widget.NewMultiLineEntry()
	s.json.TextStyle.Monospace = true
	s.json.Wrapping = fyne.TextWrapOff
	s.json.SetMinRowsVisible(6)
	s.json.SetPlaceHolder(`{"name": value, …}`)
	s.note = widget.NewLabel("")
	s.note.Wrapping = fyne.TextWrapWord
	s.note.Importance = widget.LowImportance
	s.problem = widget.NewLabel("")
	s.problem.Wrapping = fyne.TextWrapWord
	s.problem.Importance = widget.DangerImportance
	s.problem.Hide()
	s.fields = container.NewVBox()
	s.content = container.NewVBox()
	switch {
	case f.JSONOnly != "":
		s.note.SetText("The form cannot show this schema (" + f.JSONOnly + "): write the arguments as JSON.")
		s.json.SetText("{}")
		s.content.Objects = []fyne.CanvasObject{s.note, s.json, s.problem}
		return s
	case len(f.Fields) == 0:
		s.note.SetText("It takes no arguments.")
		s.content.Objects = []fyne.CanvasObject{s.note, s.problem}
		return s
	}
	s.root = newObjectInput(f.Fields, nil)
	s.fields.Objects = []fyne.CanvasObject{s.root.widget()}
	s.mode = widget.NewRadioGroup([]string{modeForm, modeJSON}, s.switchMode)
	s.mode.Horizontal = true
	s.mode.Required = true
	s.mode.Selected = modeForm
	s.content.Objects = []fyne.CanvasObject{s.mode, s.fields, s.problem}
	return s
}

// switchMode moves what is filled in to the other editor.
func (s *schemaForm) switchMode(mode string) {
	if s.root == nil {
		return
	}
	s.showProblem(nil)
	switch mode {
	case modeJSON:
		v, _, _ := s.root.value() // what is there, even unfinished
		m, _ := v.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		b, _ := json.MarshalIndent(m, "", "  ")
		s.json.SetText(string(b))
		s.fields.Objects = []fyne.CanvasObject{s.json}
	case modeForm:
		m, err := s.parseJSON()
		if err != nil {
			// Stay with JSON: the form cannot show what does not parse.
			s.mode.Selected = modeJSON
			s.mode.Refresh()
			s.showProblem(err)
			return
		}
		s.root.set(m)
		s.fields.Objects = []fyne.CanvasObject{s.root.widget()}
	}
	s.fields.Refresh()
}

func (s *schemaForm) jsonMode() bool {
	return s.form.JSONOnly != "" || s.mode != nil && s.mode.Selected == modeJSON
}

func (s *schemaForm) parseJSON() (map[string]any, error) {
	text := strings.TrimSpace(s.json.Text)
	if text == "" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("the JSON does not parse: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`the arguments must be a JSON object ({"name": value, …})`)
	}
	return m, nil
}

// values reads the answers and checks them against the schema; the
// problem shows under the form.
func (s *schemaForm) values() (map[string]any, error) {
	m, err := s.read()
	if err == nil {
		err = s.form.Check(m)
	}
	s.showProblem(err)
	return m, err
}

func (s *schemaForm) read() (map[string]any, error) {
	if s.jsonMode() {
		return s.parseJSON()
	}
	if s.root == nil {
		return map[string]any{}, nil
	}
	v, _, err := s.root.value()
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, err
}

// setValues fills the form with earlier answers.
func (s *schemaForm) setValues(m map[string]any) {
	s.showProblem(nil)
	if s.jsonMode() || s.root == nil {
		b, _ := json.MarshalIndent(m, "", "  ")
		s.json.SetText(string(b))
		return
	}
	s.root.set(m)
}

func (s *schemaForm) showProblem(err error) {
	if err == nil {
		s.problem.Hide()
		return
	}
	s.problem.SetText(err.Error())
	s.problem.Show()
}

// fieldInput is the widget of one field and the way to read it back.
type fieldInput interface {
	widget() fyne.CanvasObject
	// value is what the field holds; set is false for an optional field
	// left empty. err says what is wrong, naming the field.
	value() (v any, set bool, err error)
	// set fills the field (nil: empties it).
	set(v any)
}

func newInput(f *schemaform.Field) fieldInput {
	switch f.Kind {
	case schemaform.FieldBool:
		return newBoolInput(f)
	case schemaform.FieldChoice:
		return newChoiceInput(f)
	case schemaform.FieldChoices:
		return newChoicesInput(f)
	case schemaform.FieldList:
		return newListInput(f)
	case schemaform.FieldObject:
		return newObjectInput(f.Fields, f)
	}
	return newTextInput(f)
}

// fieldError names the field a problem is in.
func fieldError(f *schemaform.Field, err error) error {
	name := f.Title
	if name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

var errRequired = errors.New("required")

// textInput is an entry: text, a number, or JSON.
type textInput struct {
	f *schemaform.Field
	e *widget.Entry
}

func newTextInput(f *schemaform.Field) *textInput {
	t := &textInput{f: f, e: widget.NewEntry()}
	if f.Kind == schemaform.FieldJSON || f.Kind == schemaform.FieldObject || f.Kind == schemaform.FieldList {
		t.e.MultiLine = true
		t.e.TextStyle.Monospace = true
		t.e.Wrapping = fyne.TextWrapOff
		t.e.SetMinRowsVisible(2)
	}
	if f.HasDefault {
		t.e.SetText(f.Text(f.Default))
	}
	t.e.Validator = func(string) error {
		_, _, err := t.value()
		return err
	}
	return t
}

func (t *textInput) widget() fyne.CanvasObject { return t.e }

func (t *textInput) value() (any, bool, error) {
	if t.e.Text == "" {
		if t.f.Required {
			return nil, false, errRequired
		}
		return nil, false, nil
	}
	v, err := t.f.Parse(t.e.Text)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

func (t *textInput) set(v any) { t.e.SetText(t.f.Text(v)) }

// boolInput is a check box. An optional one without a default is sent
// only when checked.
type boolInput struct {
	f *schemaform.Field
	c *widget.Check
}

func newBoolInput(f *schemaform.Field) *boolInput {
	b := &boolInput{f: f, c: widget.NewCheck("", nil)}
	if d, ok := f.Default.(bool); ok {
		b.c.SetChecked(d)
	}
	return b
}

func (b *boolInput) widget() fyne.CanvasObject { return b.c }

func (b *boolInput) value() (any, bool, error) {
	if !b.c.Checked && !b.f.Required && !b.f.HasDefault {
		return nil, false, nil
	}
	return b.c.Checked, true, nil
}

func (b *boolInput) set(v any) {
	c, _ := v.(bool)
	b.c.SetChecked(c)
}

// choiceInput is a drop-down of an enum's values; an optional one can be
// left at "not set".
type choiceInput struct {
	f *schemaform.Field
	s *widget.Select
}

const notSet = "(not set)"

func newChoiceInput(f *schemaform.Field) *choiceInput {
	var opts []string
	if !f.Required {
		opts = append(opts, notSet)
	}
	for _, c := range f.Choices {
		opts = append(opts, c.Title)
	}
	ci := &choiceInput{f: f, s: widget.NewSelect(opts, nil)}
	ci.s.PlaceHolder = "(choose)"
	if f.HasDefault {
		ci.set(f.Default)
	}
	return ci
}

func (c *choiceInput) widget() fyne.CanvasObject { return c.s }

func (c *choiceInput) value() (any, bool, error) {
	for _, ch := range c.f.Choices {
		if ch.Title == c.s.Selected {
			return ch.Value, true, nil
		}
	}
	if c.f.Required {
		return nil, false, errRequired
	}
	return nil, false, nil
}

func (c *choiceInput) set(v any) {
	if i := c.f.ChoiceIndex(v); i >= 0 {
		c.s.SetSelected(c.f.Choices[i].Title)
		return
	}
	c.s.ClearSelected()
}

// choicesInput is check boxes for an array of an enum's values.
type choicesInput struct {
	f *schemaform.Field
	g *widget.CheckGroup
}

func newChoicesInput(f *schemaform.Field) *choicesInput {
	var opts []string
	for _, c := range f.Choices {
		opts = append(opts, c.Title)
	}
	ci := &choicesInput{f: f, g: widget.NewCheckGroup(opts, nil)}
	ci.g.Horizontal = len(opts) <= 4
	if f.HasDefault {
		ci.set(f.Default)
	}
	return ci
}

func (c *choicesInput) widget() fyne.CanvasObject { return c.g }

func (c *choicesInput) value() (any, bool, error) {
	out := []any{}
	for _, ch := range c.f.Choices {
		for _, sel := range c.g.Selected {
			if sel == ch.Title {
				out = append(out, ch.Value)
			}
		}
	}
	if len(out) == 0 && !c.f.Required && !c.f.HasDefault {
		return nil, false, nil
	}
	return out, true, c.f.CheckValue(out)
}

func (c *choicesInput) set(v any) {
	vs, _ := v.([]any)
	var sel []string
	for _, x := range vs {
		if i := c.f.ChoiceIndex(x); i >= 0 {
			sel = append(sel, c.f.Choices[i].Title)
		}
	}
	c.g.SetSelected(sel)
}

// listInput is a list of inputs of one kind, with Add and Remove.
type listInput struct {
	f     *schemaform.Field
	items []fieldInput
	rows  *fyne.Container
	box   *fyne.Container
}

func newListInput(f *schemaform.Field) *listInput {
	l := &listInput{f: f, rows: container.NewVBox()}
	add := widget.NewButtonWithIcon("Add", theme.ContentAddIcon(), func() { l.add(nil) })
	add.Importance = widget.LowImportance
	l.box = container.NewVBox(l.rows, container.NewHBox(add))
	switch {
	case f.HasDefault:
		l.set(f.Default)
	case f.Required:
		l.add(nil) // a list to fill starts with a row to fill
	}
	return l
}

func (l *listInput) add(v any) {
	in := newInput(l.f.Item)
	if v != nil {
		in.set(v)
	}
	l.items = append(l.items, in)
	var row *fyne.Container
	remove := widget.NewButtonWithIcon("", theme.ContentRemoveIcon(), func() {
		for i, x := range l.items {
			if x == in {
				l.items = append(l.items[:i], l.items[i+1:]...)
			}
		}
		l.rows.Remove(row)
	})
	remove.Importance = widget.LowImportance
	row = container.NewBorder(nil, nil, nil, remove, in.widget())
	l.rows.Add(row)
}

func (l *listInput) widget() fyne.CanvasObject { return l.box }

func (l *listInput) value() (any, bool, error) {
	out := []any{}
	for i, in := range l.items {
		v, set, err := in.value()
		if err != nil {
			return out, false, fmt.Errorf("item %d: %w", i+1, err)
		}
		if set {
			out = append(out, v)
		}
	}
	if len(out) == 0 && !l.f.Required {
		return nil, false, nil
	}
	return out, true, l.f.CheckValue(out)
}

func (l *listInput) set(v any) {
	l.items = nil
	l.rows.RemoveAll()
	vs, _ := v.([]any)
	for _, x := range vs {
		l.add(x)
	}
}

// objectInput is the fields of an object, each under its title, with its
// description and what it takes below.
type objectInput struct {
	fields []*schemaform.Field
	inputs []fieldInput
	of     *schemaform.Field // the field it is the value of; nil for the arguments
	box    *fyne.Container
}

func newObjectInput(fields []*schemaform.Field, of *schemaform.Field) *objectInput {
	o := &objectInput{fields: fields, of: of, box: container.NewVBox()}
	nested := of != nil
	for _, f := range fields {
		in := newInput(f)
		o.inputs = append(o.inputs, in)
		title := widget.NewLabelWithStyle(f.Title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		if f.Required {
			title.SetText(f.Title + " *")
		}
		row := []fyne.CanvasObject{title}
		if f.Kind == schemaform.FieldBool {
			// The box sits before its title.
			row = []fyne.CanvasObject{container.NewHBox(in.widget(), title)}
		} else {
			row = append(row, in.widget())
		}
		if hint := fieldHint(f); hint != "" {
			h := widget.NewLabel(hint)
			h.Wrapping = fyne.TextWrapWord
			h.Importance = widget.LowImportance
			h.SizeName = theme.SizeNameCaptionText
			row = append(row, h)
		}
		if nested {
			o.box.Add(container.NewPadded(container.NewVBox(row...)))
		} else {
			o.box.Add(container.NewVBox(row...))
		}
	}
	return o
}

// fieldHint is the line under a field: its description, and what it takes.
func fieldHint(f *schemaform.Field) string {
	parts := []string{}
	if d := strings.TrimSpace(f.Description); d != "" {
		parts = append(parts, present.Visible(d))
	}
	if f.Hint != "" {
		parts = append(parts, "("+f.Hint+")")
	}
	return strings.Join(parts, " ")
}

func (o *objectInput) widget() fyne.CanvasObject {
	if o.of != nil {
		return widget.NewCard("", "", o.box)
	}
	return o.box
}

func (o *objectInput) value() (any, bool, error) {
	m := map[string]any{}
	var first error
	for i, in := range o.inputs {
		v, set, err := in.value()
		if err != nil && first == nil {
			first = fieldError(o.fields[i], err)
		}
		if set {
			m[o.fields[i].Name] = v
		}
	}
	optional := o.of != nil && !o.of.Required
	if len(m) == 0 && optional && allRequiredEmpty(o) {
		// An optional object left empty is left out.
		return nil, false, nil
	}
	return m, true, first
}

// allRequiredEmpty reports whether every problem of o is a required field
// left empty, with nothing else filled in.
func allRequiredEmpty(o *objectInput) bool {
	for _, in := range o.inputs {
		if _, set, err := in.value(); set || err != nil && !errors.Is(err, errRequired) {
			return false
		}
	}
	return true
}

func (o *objectInput) set(v any) {
	m, _ := v.(map[string]any)
	for i, f := range o.fields {
		x, ok := m[f.Name]
		switch {
		case ok:
			o.inputs[i].set(x)
		case f.HasDefault && m == nil:
			o.inputs[i].set(f.Default)
		default:
			o.inputs[i].set(nil)
		}
	}
}
