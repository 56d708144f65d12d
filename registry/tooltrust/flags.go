package tooltrust

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"mcptray/internal/lazyre"
)

// Flag is something in a tool's definition that may hide instructions
// from the person while a model reads them.
type Flag struct {
	// Field is where: "description", "title", "inputSchema.properties.path.description", …
	Field string `json:"field"`
	// Kind is what: one of the Kind constants.
	Kind string `json:"kind"`
	// Reason says it plainly, with where in the text.
	Reason string `json:"reason"`
}

func (f Flag) String() string { return f.Field + ": " + f.Reason }

// The kinds of [Flag].
const (
	KindInvisible   = "invisible"   // zero-width characters, Unicode tag characters
	KindBidi        = "bidi"        // bidirectional controls that reorder what is shown
	KindEscape      = "escape"      // terminal escapes and other control characters
	KindInstruction = "instruction" // text that speaks to the model over the person's head
	KindLong        = "long"        // a description far longer than a tool needs
)

// LongDescription is the length (in characters) past which a description
// is flagged: the tools of the reference servers say what they do in well
// under a thousand.
const LongDescription = 2000

// instructionPatterns are the phrasings of prompt injection in tool
// descriptions, as published attacks and scanners list them. Each comes
// with words one of which any match holds (lower case): a text with none
// of them is not matched against it, and a pattern is compiled only when
// a text first holds one of its words.
var instructionPatterns = []instructionPattern{
	pattern(`(?i)\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|preceding|other|your)\s+(instructions|prompts?|rules|directions|messages)`,
		[]string{"ignore", "disregard", "forget", "override"}, "tells the model to ignore its instructions"),
	pattern(`(?i)\b(do\s+not|don'?t|never)\s+(tell|inform|mention|reveal|show|notify)\s+(this\s+to\s+)?(the\s+)?(user|human|person)`,
		[]string{"not", "don", "never"}, "tells the model to keep something from the user"),
	pattern(`(?i)<\s*/?\s*(important|system|instructions?|secret|hidden)\s*>`,
		[]string{"<"}, "holds a tag addressed to the model"),
	pattern(`(?i)\b(system\s+prompt|you\s+are\s+now|new\s+instructions|act\s+as\s+(an?\s+)?(admin|root|developer))\b`,
		[]string{"system", "you", "new", "act"}, "tries to change the model's role or instructions"),
	pattern(`(?i)\b(before|instead\s+of)\s+(using|calling)\s+(this|any|other)\s+tools?\b.{0,80}\b(read|send|pass|include)\b`,
		[]string{"before", "instead"}, "tells the model to do something else before or instead of the call"),
	pattern(`(?i)(~/\.ssh|\bid_rsa\b|\.aws/credentials|\bpassw(or)?d\b.{0,40}\b(send|include|pass)\b)`,
		[]string{".ssh", "id_rsa", "credentials", "passw"}, "names secrets or credentials to read or pass on"),
}

type instructionPattern struct {
	re   func() *regexp.Regexp
	keys []string // one of these is in every match, folded to lower case
	what string
}

func pattern(expr string, keys []string, what string) instructionPattern {
	return instructionPattern{re: lazyre.New(expr), keys: keys, what: what}
}

// folded is s in lower case as (?i) matches it: strings.ToLower, and the
// long s (U+017F), which folds to s, as s.
func folded(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "\u017f", "s")
}

// Definition is what of a tool definition [Flags] reads: its title and
// description, and the JSON of its schemas and annotations (nil when it
// has none).
type Definition struct {
	Title, Description                     string
	InputSchema, OutputSchema, Annotations json.RawMessage
}

// Flags are the signs of hidden instructions in a tool definition (its
// tools/list JSON): in its title, its description, and the descriptions
// and titles anywhere in its input and output schemas. Nil when none.
func Flags(def []byte) []Flag {
	var m map[string]json.RawMessage
	if json.Unmarshal(def, &m) != nil {
		return nil
	}
	text := func(f string) string {
		var s string
		json.Unmarshal(m[f], &s) // not a string: no text
		return s
	}
	return Definition{Title: text("title"), Description: text("description"), InputSchema: m["inputSchema"], OutputSchema: m["outputSchema"], Annotations: m["annotations"]}.Flags()
}

// Flags are the definition's signs of hidden instructions; nil when none.
func (d Definition) Flags() []Flag {
	var out []Flag
	out = append(out, TextFlags("title", d.Title)...)
	out = append(out, TextFlags("description", d.Description)...)
	for _, part := range []struct {
		field string
		raw   json.RawMessage
	}{{"inputSchema", d.InputSchema}, {"outputSchema", d.OutputSchema}, {"annotations", d.Annotations}} {
		if len(part.raw) == 0 {
			continue
		}
		v, err := decode(part.raw)
		if err != nil {
			continue
		}
		walkText(part.field, v, func(field, s string) { out = append(out, TextFlags(field, s)...) })
	}
	return out
}

// walkText calls fn with every string in v that a model reads as prose:
// descriptions, titles and the like, and property names (a name can carry
// text too).
func walkText(path string, v any, fn func(field, s string)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "." + k
			if s, ok := v[k].(string); ok {
				fn(p, s)
				continue
			}
			if path == "inputSchema.properties" || strings.HasSuffix(path, ".properties") {
				fn(p+" (name)", k)
			}
			walkText(p, v[k], fn)
		}
	case []any:
		for i, e := range v {
			p := fmt.Sprintf("%s[%d]", path, i)
			if s, ok := e.(string); ok {
				fn(p, s)
				continue
			}
			walkText(p, e, fn)
		}
	}
}

// TextFlags are the flags of one text (field names where it is).
func TextFlags(field, s string) []Flag {
	var out []Flag
	var invisible, bidi, escape []string
	col := 0
	for i, r := range s {
		col++
		at := func(what string) string { return fmt.Sprintf("%s at character %d", what, col) }
		switch {
		case r == utf8.RuneError && isBadByte(s, i):
			escape = append(escape, at("an invalid UTF-8 byte"))
		case isInvisible(r):
			invisible = append(invisible, at(fmt.Sprintf("U+%04X", r)))
		case isBidi(r):
			bidi = append(bidi, at(fmt.Sprintf("U+%04X", r)))
		case r == 0x1b:
			escape = append(escape, at("an ESC (terminal escape)"))
		case r == 0x9b:
			escape = append(escape, at("a CSI (terminal escape)"))
		case (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || r == 0x7f || (r >= 0x80 && r < 0xa0):
			escape = append(escape, at(fmt.Sprintf("the control character U+%04X", r)))
		}
	}
	if len(invisible) > 0 {
		out = append(out, Flag{Field: field, Kind: KindInvisible, Reason: "holds invisible characters a model reads and a person does not see: " + list(invisible)})
	}
	if len(bidi) > 0 {
		out = append(out, Flag{Field: field, Kind: KindBidi, Reason: "holds bidirectional controls that make the text show other than it reads: " + list(bidi)})
	}
	if len(escape) > 0 {
		out = append(out, Flag{Field: field, Kind: KindEscape, Reason: "holds control characters that can rewrite a terminal's screen: " + list(escape)})
	}
	lower := folded(s)
	for _, p := range instructionPatterns {
		if !slices.ContainsFunc(p.keys, func(k string) bool { return strings.Contains(lower, k) }) {
			continue
		}
		if loc := p.re().FindStringIndex(s); loc != nil {
			out = append(out, Flag{Field: field, Kind: KindInstruction, Reason: fmt.Sprintf("%s: %q", p.what, excerpt(s[loc[0]:loc[1]]))})
		}
	}
	if n := utf8.RuneCountInString(s); n > LongDescription {
		out = append(out, Flag{Field: field, Kind: KindLong, Reason: fmt.Sprintf("is %d characters long (more than %d): room for instructions no one reads", n, LongDescription)})
	}
	return out
}

func isBadByte(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return r == utf8.RuneError && size == 1
}

// isInvisible: zero-width spaces and joiners, word joiner and invisible
// operators, the byte-order mark inside text, the Mongolian vowel
// separator, soft hyphen, and the tag characters (E0000–E007F) that spell
// ASCII no one sees.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200d, r >= 0x2060 && r <= 0x2064, r == 0xfeff, r == 0x180e, r == 0x00ad, r == 0x034f:
		return true
	case r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// isBidi: the embedding, override and isolate controls and the marks.
func isBidi(r rune) bool {
	switch {
	case r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// list says at most three places, and how many more.
func list(places []string) string {
	if len(places) <= 3 {
		return strings.Join(places, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(places[:3], ", "), len(places)-3)
}

// excerpt is matched text, short and safe to print.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:80]) + "…"
	}
	return s
}
