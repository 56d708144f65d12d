package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"mcptray/registry"
)

// Result is an export's output plus what a person must know about it.
type Result struct {
	Data []byte
	// Warnings: something is not as it should be (a placeholder written, a
	// field dropped, a command not found). Printed on stderr.
	Warnings []string
	// Notes: how the output works (a bridge used, the client's secret store).
	Notes []string
}

func (b *builder) result(data []byte) *Result {
	r := &Result{Data: data, Warnings: b.warnings, Notes: b.notes}
	if b.c.Unverified != "" {
		r.Notes = append(r.Notes, "unverified: "+b.c.Unverified+".")
	}
	return r
}

// Snippet renders servers wrapped in the client's top-level key, exactly as
// they go into its file: JSON, YAML (Goose, Continue) or TOML (Codex).
func (c *Client) Snippet(servers []*registry.Server, opts *Options) (*Result, error) {
	o := opts.withDefaults()
	if err := CheckOS(o.OS); err != nil {
		return nil, err
	}
	bs, b, err := c.build(servers, o, true)
	if err != nil {
		return nil, err
	}
	return b.result(c.render(bs, o)), nil
}

// render lays out built servers as a whole document in the client's format.
func (c *Client) render(bs []*built, o *Options) []byte {
	key := c.keyPath(o)
	switch c.Format {
	case FormatTOML:
		var buf bytes.Buffer
		for i, s := range bs {
			if i > 0 {
				buf.WriteByte('\n')
			}
			buf.WriteString(tomlTable(key[0], s.name, s.entry))
		}
		return buf.Bytes()
	case FormatYAML:
		var inner any
		if c.List {
			var list []any
			for _, s := range bs {
				list = append(list, s.entry)
			}
			inner = list
		} else {
			var m obj
			for _, s := range bs {
				m = append(m, kv{s.name, s.entry})
			}
			inner = m
		}
		return yamlDoc(wrap(key, inner), 2)
	default:
		var m obj
		for _, s := range bs {
			m = append(m, kv{s.name, s.entry})
		}
		var buf bytes.Buffer
		writeJSON(&buf, wrap(key, m), "", "  ")
		buf.WriteByte('\n')
		return buf.Bytes()
	}
}

func wrap(key []string, v any) any {
	for i := len(key) - 1; i >= 0; i-- {
		v = obj{{key[i], v}}
	}
	return v
}

// writeJSON writes v indented: each nesting level adds unit to indent.
func writeJSON(b *bytes.Buffer, v any, indent, unit string) {
	switch x := v.(type) {
	case obj:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range x {
			b.WriteString(indent + unit)
			b.WriteString(jsonString(m.K))
			b.WriteString(": ")
			writeJSON(b, m.V, indent+unit, unit)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []string:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, s := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonString(s))
		}
		b.WriteString("]")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(indent + unit)
			writeJSON(b, e, indent+unit, unit)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case rawJSON:
		b.Write(x)
	case string:
		b.WriteString(jsonString(x))
	default:
		j, _ := json.Marshal(x)
		b.Write(j)
	}
}

// rawJSON is a value copied as is from a file (a field mcptray keeps).
type rawJSON []byte

// MarshalJSON writes the object compactly, members in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(m.K))
		b.WriteByte(':')
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m.V); err != nil {
			return nil, err
		}
		b.Write(bytes.TrimSuffix(v.Bytes(), []byte("\n")))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// yamlNode converts an ordered value to a YAML node.
func yamlNode(v any) *yaml.Node {
	switch x := v.(type) {
	case obj:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, m := range x {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: m.K}, yamlNode(m.V))
		}
		return n
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if len(x) == 0 {
			n.Style = yaml.FlowStyle
		}
		for _, s := range x {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			n.Content = append(n.Content, yamlNode(e))
		}
		return n
	case *yaml.Node:
		return x
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
}

func yamlDoc(v any, indent int) []byte {
	return yamlEncode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{yamlNode(v)}}, indent)
}

func yamlEncode(n *yaml.Node, indent int) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(indent)
	if err := enc.Encode(n); err != nil {
		// Only malformed node trees fail, and those are built here.
		panic(fmt.Sprintf("clients: yaml encode: %v", err))
	}
	enc.Close()
	return buf.Bytes()
}

// tomlTable writes one [TABLE.NAME] table: scalars and arrays first, then
// small maps as inline tables (the shape Codex documents).
func tomlTable(table, name string, e obj) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s.%s]\n", registry.TOMLKey(table), registry.TOMLKey(name))
	for _, m := range e {
		fmt.Fprintf(&b, "%s = %s\n", registry.TOMLKey(m.K), tomlValue(m.V))
	}
	return b.String()
}

func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return registry.TOMLString(x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = registry.TOMLString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case obj:
		if len(x) == 0 {
			return "{}"
		}
		parts := make([]string, len(x))
		for i, m := range x {
			parts[i] = registry.TOMLKey(m.K) + " = " + tomlValue(m.V)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	}
	return `""`
}
