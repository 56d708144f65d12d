// Package schemaform is the model of a form made from a JSON Schema (a
// tool's input, an elicitation, a prompt's arguments, a resource template's
// variables): its fields, how a field's text is parsed, and the limits a
// value must keep. The desktop app draws it with widgets and the command line
// asks it field by field; both check values with the same rules.
package schemaform
