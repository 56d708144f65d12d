package registry

// EditDistance is the Levenshtein distance between a and b, in bytes: how
// names a person mistyped are matched to the nearest ones offered.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest is the name of names nearest to name when it is close enough to
// be a likely typo (two edits, or a third of its length for a long name),
// else "".
func Nearest(name string, names []string) string {
	best, bestD := "", max(len(name)/3, 2)+1
	for _, n := range names {
		if d := EditDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
