package clients

import (
	"fmt"
	"strings"

	"mcptray/internal/lazyre"
	"mcptray/registry"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxDiffCells bounds the line-matching table; past it the changed middle is
// shown as one replaced block (still a correct diff, just not minimal).
const maxDiffCells = 16 << 20

// UnifiedDiff renders a unified diff (as `diff -u` does) from old to new;
// "" when they are equal. Client files change in a few places, so common
// leading and trailing lines are set aside before a longest-common-
// subsequence match of the rest.
func UnifiedDiff(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{' ', a[i]})
	}
	ops = append(ops, lcsOps(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for i := len(a) - suf; i < len(a); i++ {
		ops = append(ops, diffOp{' ', a[i]})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	// Group changes into hunks with context.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		aLine, bLine := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				aLine++
			}
			if op.kind != '-' {
				bLine++
			}
		}
		aN, bN := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		if aN == 0 {
			aLine--
		}
		if bN == 0 {
			bLine--
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aLine, aN), hunkRange(bLine, bN))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(strings.TrimSuffix(op.line, "\n"))
			out.WriteByte('\n')
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// splitLines keeps each line's newline, so a missing final newline shows.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func lcsOps(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > maxDiffCells || len(a) == 0 || len(b) == 0 {
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	// t[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	t := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i*w+j] = t[(i+1)*w+j+1] + 1
			} else {
				t[i*w+j] = max(t[(i+1)*w+j], t[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i, j = i+1, j+1
		case t[(i+1)*w+j] >= t[i*w+j+1]:
			ops = append(ops, diffOp{'-', a[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, diffOp{'-', a[i]})
	}
	for ; j < len(b); j++ {
		ops = append(ops, diffOp{'+', b[j]})
	}
	return ops
}

// Keys with a string value, in each format's spelling: "key": "value" (JSON),
// key = "value" (TOML, inline tables too), key: value (YAML).
var (
	jsonField = lazyre.New(`"((?:[^"\\]|\\.)*)"(\s*:\s*)"((?:[^"\\]|\\.)*)"`)
	tomlField = lazyre.New(`([A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*")(\s*=\s*)"((?:[^"\\]|\\.)*)"`)
	yamlField = lazyre.New(`^(\s*(?:- )?)([A-Za-z0-9_.-]+|"[^"]*"|'[^']*')(:[ \t]+)(\S.*?)\s*$`)
)

// maskSecretFields masks, in every line of a diff of the client's file, the
// value of each key named like a secret ([registry.SecretName]): what the
// file holds besides mcptray's entries (an API key, an OAuth token) shows
// up as context. The client's own references stay readable.
func (c *Client) maskSecretFields(diff string) string {
	mask := func(key, val string) (string, bool) {
		key = strings.Trim(key, `"'`)
		if !registry.SecretName(key) || val == "" || strings.Contains(val, registry.Masked) || val == Hidden {
			return "", false
		}
		plain := c.unrefString(strings.Trim(val, `"'`))
		if m := registry.MaskSecret(plain); m != plain {
			return m, true
		}
		return "", false
	}
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, `\`) {
			continue
		}
		mark, body := l[:1], l[1:]
		switch c.Format {
		case FormatYAML:
			nl := strings.HasSuffix(body, "\n")
			body = strings.TrimSuffix(body, "\n")
			if m := yamlField().FindStringSubmatch(body); m != nil {
				if v, ok := mask(m[2], m[4]); ok {
					body = m[1] + m[2] + m[3] + v
				}
			}
			if nl {
				body += "\n"
			}
		case FormatTOML:
			body = tomlField().ReplaceAllStringFunc(body, func(f string) string {
				m := tomlField().FindStringSubmatch(f)
				if v, ok := mask(m[1], m[3]); ok {
					return m[1] + m[2] + jsonString(v)
				}
				return f
			})
		default:
			body = jsonField().ReplaceAllStringFunc(body, func(f string) string {
				m := jsonField().FindStringSubmatch(f)
				if v, ok := mask(m[1], m[3]); ok {
					return `"` + m[1] + `"` + m[2] + jsonString(v)
				}
				return f
			})
		}
		lines[i] = mark + body
	}
	return strings.Join(lines, "")
}
