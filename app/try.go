package app

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/yosida95/uritemplate/v3"

	"mcptray/healthcheck"
)

// What the window needs to try a server that is not drawing: the forms of
// prompts and resource templates, and where content is saved.

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

// SaveDir is where the window saves what servers send that it cannot
// show: the Downloads folder ($XDG_DOWNLOAD_DIR, else ~/Downloads), or
// the home folder when there is none.
func SaveDir() string {
	if d := os.Getenv("XDG_DOWNLOAD_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return os.TempDir()
	}
	if st, err := os.Stat(filepath.Join(home, "Downloads")); err == nil && st.IsDir() {
		return filepath.Join(home, "Downloads")
	}
	return home
}

// SaveContent writes data to a new file in dir named after what it came
// from (get-tiny-image-1.png, …; never over a file) and returns its path.
func SaveContent(dir, from string, data []byte, mimeType string) (string, error) {
	sv := &saver{dir: dir, prefix: safeFileName(from)}
	return sv.write(data, mimeType)
}

// DrawablePNG is a PNG as a browser draws it: ancillary chunks (colour
// profile, text, EXIF…) whose checksum is wrong are left out, as libpng
// does, where Go's decoder refuses the whole image. server-everything's
// tiny image has such a profile. Anything else is returned as it is.
func DrawablePNG(data []byte) []byte {
	const sig = "\x89PNG\r\n\x1a\n"
	if !bytes.HasPrefix(data, []byte(sig)) {
		return data
	}
	out := append([]byte(nil), sig...)
	dropped := false
	for rest := data[len(sig):]; len(rest) > 0; {
		if len(rest) < 12 {
			return data
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n)+12 > uint64(len(rest)) {
			return data
		}
		chunk := rest[:12+n]
		rest = rest[12+n:]
		typ := chunk[4:8]
		ancillary := typ[0]&0x20 != 0
		if ancillary && crc32.ChecksumIEEE(chunk[4:8+n]) != binary.BigEndian.Uint32(chunk[8+n:]) {
			dropped = true
			continue
		}
		out = append(out, chunk...)
	}
	if !dropped {
		return data
	}
	return out
}
