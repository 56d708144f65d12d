package clidoc

import (
	"fmt"
	"slices"
	"strings"
)

// Page is one man page: its file name (mcptray-check.1) and roff text.
type Page struct {
	Name string
	Text string
}

// ManInfo is what the man pages say around the table.
type ManInfo struct {
	Prog        string // mcptray
	Version     string
	Date        string // the page date, YYYY-MM-DD
	Summary     string // one line: what the program does
	Description string // the program's own page: paragraphs (blank-line separated)
	Global      []Flag // flags taken before the command
	SeeAlso     []string
}

// Man writes section-1 pages: one for the program (its synopsis, global
// flags and the list of commands) and one for each top-level command
// (PROG-COMMAND, with its subcommands in it), as git does.
func Man(info ManInfo, top []Command) []Page {
	footer := info.Prog + " " + info.Version
	var pages []Page
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s 1 \"%s\" \"%s\" \"User Commands\"\n", strings.ToUpper(roff(info.Prog)), info.Date, roff(footer))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(info.Prog), roff(info.Summary))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n[\\fB\\-\\-config\\fR \\fIFILE\\fR] [\\fICOMMAND\\fR] [\\fIFLAGS\\fR]\n", roff(info.Prog))
	b.WriteString(".SH DESCRIPTION\n")
	paragraphs(&b, info.Description)
	if len(info.Global) > 0 {
		b.WriteString(".SH OPTIONS\n")
		flagList(&b, info.Global)
	}
	b.WriteString(".SH COMMANDS\n")
	for _, c := range top {
		fmt.Fprintf(&b, ".TP\n.BR %s\\-%s (1)\n%s\n", roff(info.Prog), roff(c.Name), roff(sentence(c.Summary)))
	}
	var also []string
	for _, c := range top {
		also = append(also, info.Prog+"-"+c.Name)
	}
	seeAlso(&b, append(also, info.SeeAlso...))
	pages = append(pages, Page{info.Prog + ".1", b.String()})

	for _, c := range top {
		var b strings.Builder
		name := info.Prog + "-" + c.Name
		fmt.Fprintf(&b, ".TH %s 1 \"%s\" \"%s\" \"User Commands\"\n", strings.ToUpper(roff(name)), info.Date, roff(footer))
		fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(name), roff(c.Summary))
		b.WriteString(".SH SYNOPSIS\n")
		if len(c.Children) == 0 {
			synopsis(&b, info.Prog+" "+c.Name, c)
		} else {
			for _, s := range c.Children {
				synopsis(&b, info.Prog+" "+c.Name+" "+s.Name, s)
				b.WriteString(".br\n")
			}
		}
		b.WriteString(".SH DESCRIPTION\n")
		if c.Help != "" {
			paragraphs(&b, c.Help)
		} else {
			fmt.Fprintf(&b, "%s\n", roff(sentence(c.Summary)))
		}
		if len(c.Flags) > 0 {
			b.WriteString(".SH OPTIONS\n")
			flagList(&b, c.Flags)
		}
		if len(c.Children) > 0 {
			b.WriteString(".SH COMMANDS\n")
			for _, s := range c.Children {
				fmt.Fprintf(&b, ".SS %s %s\n", roff(c.Name), roff(s.Name))
				if s.Help != "" {
					paragraphs(&b, s.Help)
				} else {
					fmt.Fprintf(&b, "%s\n", roff(sentence(s.Summary)))
				}
				if len(s.Flags) > 0 {
					flagList(&b, s.Flags)
				}
			}
		}
		seeAlso(&b, []string{info.Prog})
		pages = append(pages, Page{name + ".1", b.String()})
	}
	return pages
}

func synopsis(b *strings.Builder, cmd string, c Command) {
	fmt.Fprintf(b, ".B %s\n", roff(cmd))
	if len(c.Flags) > 0 {
		b.WriteString("[\\fIFLAGS\\fR]\n")
	}
	if c.Args != "" {
		fmt.Fprintf(b, "\\fI%s\\fR\n", roff(c.Args))
	}
}

func flagList(b *strings.Builder, flags []Flag) {
	for _, f := range flags {
		fmt.Fprintf(b, ".TP\n\\fB\\-\\-%s\\fR", roff(f.Name))
		if f.Value {
			b.WriteString(" \\fIvalue\\fR")
		}
		b.WriteString("\n")
		usage := sentence(f.Usage)
		if f.Value && f.Default != "" {
			usage += " Default: " + f.Default + "."
		}
		fmt.Fprintf(b, "%s\n", roff(usage))
	}
}

func seeAlso(b *strings.Builder, names []string) {
	if len(names) == 0 {
		return
	}
	b.WriteString(".SH SEE ALSO\n")
	for i, n := range names {
		sep := ","
		if i == len(names)-1 {
			sep = ""
		}
		fmt.Fprintf(b, ".BR %s (1)%s\n", roff(n), sep)
	}
}

// paragraphs renders text as --help prints it: blank lines part paragraphs;
// a paragraph with indented lines (a table, an example) keeps its lines,
// the others are filled.
func paragraphs(b *strings.Builder, text string) {
	for i, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		p = strings.Trim(p, "\n")
		if p == "" {
			continue
		}
		if i > 0 {
			b.WriteString(".PP\n")
		}
		lines := strings.Split(p, "\n")
		if slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") }) {
			b.WriteString(".nf\n")
			for _, l := range lines {
				fmt.Fprintf(b, "%s\n", roffLine(l))
			}
			b.WriteString(".fi\n")
			continue
		}
		for _, l := range lines {
			fmt.Fprintf(b, "%s\n", roffLine(strings.TrimSpace(l)))
		}
	}
}

// sentence starts s with a capital and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// roff escapes text for roff: backslashes and hyphens (a bare "-" may be
// set as a hyphen, which breaks copying flags out of the page).
// Other than ASCII, a character is its Unicode escape (\[u2192] for →),
// which every groff reads whatever the page's encoding.
func roff(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7f:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roffLine escapes a line of text, and a leading "." or "'" (a roff request
// otherwise).
func roffLine(s string) string {
	s = roff(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
