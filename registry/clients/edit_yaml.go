package clients

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"mcptray/internal/lazyre"
)

var yamlLine = lazyre.New(`^yaml: line (\d+): (.*)$`)

// yamlParse reads a YAML file into its node tree (comments included).
func yamlParse(file string, src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		pe := &ParseError{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
			pe.Line, _ = strconv.Atoi(m[1])
			pe.Msg = m[2]
		}
		return nil, pe
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &ParseError{File: file, Line: 1, Msg: "the top level is not a mapping"}
	}
	return &doc, nil
}

// yamlIndent guesses the file's indentation width.
func yamlIndent(src []byte) int {
	best := 0
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimLeft(line, " ")
		if t != "" && len(t) < len(line) && !strings.HasPrefix(t, "#") {
			if n := len(line) - len(t); n >= 2 && n <= 8 && (best == 0 || n < best) {
				best = n
			}
		}
	}
	if best == 0 {
		return 2
	}
	return best
}

func mapGet(m *yaml.Node, k string) (int, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return i, m.Content[i+1]
		}
	}
	return -1, nil
}

// yamlTarget walks key from the root mapping, creating what is missing.
func yamlTarget(file string, doc *yaml.Node, key []string, list, create bool) (*yaml.Node, error) {
	cur := doc.Content[0]
	for d, k := range key {
		_, v := mapGet(cur, k)
		last := d == len(key)-1
		if v == nil || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
			if !create {
				return nil, nil
			}
			nv := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last && list {
				nv = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			}
			if v == nil {
				cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, nv)
			} else {
				*v = *nv
			}
			v = nv
		}
		want := yaml.MappingNode
		if last && list {
			want = yaml.SequenceNode
		}
		if v.Kind != want {
			return nil, &ParseError{File: file, Line: v.Line, Col: v.Column, Msg: strings.Join(key[:d+1], ".") + " has an unexpected type"}
		}
		cur = v
	}
	return cur, nil
}

// yamlValue decodes a node to plain values for comparison.
func yamlValue(n *yaml.Node) any {
	var v any
	_ = n.Decode(&v)
	return v
}

// yamlSet adds or updates one entry in a YAML file's tree.
func yamlSet(file string, doc *yaml.Node, key []string, list bool, name string, entry obj, managed map[string]bool) (string, error) {
	target, err := yamlTarget(file, doc, key, list, true)
	if err != nil {
		return "", err
	}
	var slot **yaml.Node
	if list {
		for i, e := range target.Content {
			if e.Kind == yaml.MappingNode {
				if _, n := mapGet(e, "name"); n != nil && n.Value == name {
					slot = &target.Content[i]
				}
			}
		}
	} else if i, _ := mapGet(target, name); i >= 0 {
		slot = &target.Content[i+1]
	}
	nn := yamlNode(entry)
	if slot == nil {
		if list {
			target.Content = append(target.Content, nn)
		} else {
			target.Content = append(target.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, nn)
		}
		return "added", nil
	}
	old := *slot
	if old.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(old.Content); i += 2 {
			if k := old.Content[i].Value; !managed[k] && !entry.has(k) {
				nn.Content = append(nn.Content, old.Content[i], old.Content[i+1])
			}
		}
	}
	if reflect.DeepEqual(yamlValue(old), yamlValue(nn)) {
		return "", nil
	}
	nn.HeadComment, nn.LineComment, nn.FootComment = old.HeadComment, old.LineComment, old.FootComment
	*slot = nn
	return "updated", nil
}

// yamlDelete removes one entry; false when it was not there.
func yamlDelete(file string, doc *yaml.Node, key []string, list bool, name string) (bool, error) {
	target, err := yamlTarget(file, doc, key, list, false)
	if err != nil || target == nil {
		return false, err
	}
	if list {
		for i, e := range target.Content {
			if e.Kind == yaml.MappingNode {
				if _, n := mapGet(e, "name"); n != nil && n.Value == name {
					target.Content = append(target.Content[:i], target.Content[i+1:]...)
					return true, nil
				}
			}
		}
		return false, nil
	}
	if i, _ := mapGet(target, name); i >= 0 {
		target.Content = append(target.Content[:i], target.Content[i+2:]...)
		return true, nil
	}
	return false, nil
}

// yamlEdit applies edits to a YAML file. When nothing changes the original
// bytes come back untouched (the encoder would normalise layout).
func yamlEdit(file string, src []byte, edit func(doc *yaml.Node) (bool, error)) ([]byte, error) {
	doc, err := yamlParse(file, src)
	if err != nil {
		return nil, err
	}
	changed, err := edit(doc)
	if err != nil || !changed {
		return src, err
	}
	out := yamlEncode(doc, yamlIndent(src))
	if bytes.HasPrefix(out, []byte("{}")) {
		out = nil
	}
	return out, nil
}
