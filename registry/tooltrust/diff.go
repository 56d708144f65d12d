package tooltrust

import (
	"strings"
)

// Diff is a readable change from definition old to new (canonical JSON,
// either may be nil): both indented one field a line, lines removed
// marked "-", added "+", and long runs of unchanged lines shortened.
func Diff(old, new []byte) string {
	var a, b []string
	if old != nil {
		a = strings.Split(pretty(old), "\n")
	}
	if new != nil {
		b = strings.Split(pretty(new), "\n")
	}
	ops := diffLines(a, b)
	var out strings.Builder
	const context = 2
	for i := 0; i < len(ops); i++ {
		op := ops[i]
		if op.kind != ' ' {
			out.WriteString(string(op.kind) + " " + op.line + "\n")
			continue
		}
		// A run of unchanged lines: the few beside a change are kept.
		j := i
		for j < len(ops) && ops[j].kind == ' ' {
			j++
		}
		first, last := i == 0, j == len(ops)
		keepHead, keepTail := context, context
		if first {
			keepHead = 0
		}
		if last {
			keepTail = 0
		}
		if j-i <= keepHead+keepTail+1 {
			for k := i; k < j; k++ {
				out.WriteString("  " + ops[k].line + "\n")
			}
		} else {
			for k := i; k < i+keepHead; k++ {
				out.WriteString("  " + ops[k].line + "\n")
			}
			out.WriteString("  …\n")
			for k := j - keepTail; k < j; k++ {
				out.WriteString("  " + ops[k].line + "\n")
			}
		}
		i = j - 1
	}
	return out.String()
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// maxDiffCells bounds the longest-common-subsequence table; past it the
// diff is every old line removed and every new one added.
const maxDiffCells = 4 << 20

// diffLines is a line diff by longest common subsequence.
func diffLines(a, b []string) []diffOp {
	// Common head and tail first: most changes are one field.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if (len(ma)+1)*(len(mb)+1) > maxDiffCells {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	} else {
		n, m := len(ma), len(mb)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, diffOp{' ', ma[i]})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, diffOp{'-', ma[i]})
				i++
			default:
				ops = append(ops, diffOp{'+', mb[j]})
				j++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}
