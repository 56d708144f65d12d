package toolsearch

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Terms are the words of text as the index keeps them: split at anything
// that is not a letter or a digit and at camelCase humps (so
// "SERVER__read_file", "readFile" and "read-file" give "server", "read",
// "file"), lower-cased, stop words left out, each reduced to its stem.
func Terms(text string) []string {
	var out []string
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if stopWords()[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// words splits text into words at non-alphanumerics and case humps: a
// lower-case letter followed by an upper-case one ("readFile"), and the
// last capital of a run followed by a lower-case letter ("HTTPServer":
// "HTTP", "Server").
func words(text string) []string {
	var out []string
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, text[start:end])
		}
		start = -1
	}
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			prev = 0
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			flush(i)
			start = i
		} else if unicode.IsLower(r) && unicode.IsUpper(prev) {
			// "HTTPServer": the hump is before the capital just read.
			j := i - utf8.RuneLen(prev)
			if j > start {
				flush(j)
				start = j
			}
		}
		prev = r
	}
	flush(len(text))
	return out
}

// stem reduces an English word to a stem shared by its usual forms
// ("files", "file"; "reading", "reads", "read"; "listed", "list"). It is
// deliberately light: a wrong merge costs more than a missed one.
func stem(w string) string {
	if len(w) <= 3 || !isASCII(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "es") && len(w) > 4 && strings.ContainsAny(w[len(w)-3:len(w)-2], "sxz"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = undouble(w[:len(w)-2])
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = w[:len(w)-1] // "create", "creat(ing)", "creat(ed)"
	}
	return w
}

// undouble drops a doubled final consonant ("running" → "run").
func undouble(w string) string {
	if n := len(w); n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// stopWords say nothing about what a tool does.
var stopWords = sync.OnceValue(func() map[string]bool {
	return set("a an the of to in on for from with by at as is are be been this that these those it its " +
		"and or but if then than so do does can could would should will shall may might must i me my we our you your " +
		"please some any all into about which what how when where who whom there here just also only very via using use")
})

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// synonyms are everyday words for what tools call by other names, by
// stem, each searched at [wSynonym] of the word's weight. Kept small and
// general: words people use for files, memory, time and arithmetic.
var synonyms = sync.OnceValue(func() map[string][]string {
	groups := []string{
		"folder directory dir",
		"file document",
		"remove delete forget erase",
		"find search look locate",
		"show list display view",
		"make create new",
		"change edit modify update replace",
		"move rename",
		"read open get fetch",
		"write save store",
		"remember memory memorize store observation",
		"fact observation information",
		"person people someone somebody entity",
		"relationship relation link connection",
		"knowledge graph memory",
		"add sum plus total",
		"number numeric",
		"repeat echo",
		"clock time date",
		"picture image photo",
		"env environment variable",
		"compress gzip zip",
		"wait sleep delay",
		"long slow",
		"ask elicit elicitation question",
		"llm sample sampling model",
		"size metadata info information",
		"tree structure hierarchy",
		"allowed permitted access",
	}
	m := map[string][]string{}
	for _, g := range groups {
		var stems []string
		for _, w := range strings.Fields(g) {
			stems = append(stems, stem(w))
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !contains(m[s], o) {
					m[s] = append(m[s], o)
				}
			}
		}
	}
	return m
})

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
