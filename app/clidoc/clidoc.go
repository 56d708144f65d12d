// Package clidoc turns a command table (names, synopses, summaries, help
// text and flags: what --help prints) into shell completions for bash, zsh
// and fish and into man pages, so all of them come from one source. It
// knows nothing of mcptray's commands: it is handed the table.
package clidoc

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Command is one command of the table.
type Command struct {
	Name    string
	Args    string // synopsis after the flags, e.g. "[NAME...]"
	Summary string
	Help    string
	Flags   []Flag
	// Children are the subcommands of a command that is only a group
	// ("config path", "config list"); such a command has no flags.
	Children []Command
}

// Flag is one flag of a command.
type Flag struct {
	Name    string
	Usage   string
	Default string
	// Value says the flag takes a value (--config FILE); a boolean flag
	// does not.
	Value bool
}

// node is a command with its path from the top ("" for the program itself,
// "/config/list" for `config list`).
type node struct {
	path string
	cmd  Command
}

// walk lists the program and every command, parents before children.
func walk(top []Command, global []Flag) []node {
	nodes := []node{{path: "", cmd: Command{Children: top, Flags: global}}}
	var add func(prefix string, list []Command)
	add = func(prefix string, list []Command) {
		for _, c := range list {
			p := prefix + "/" + c.Name
			nodes = append(nodes, node{p, c})
			add(p, c.Children)
		}
	}
	add("", top)
	return nodes
}

// flagsOf is a command's flags with --help, which every command takes.
func flagsOf(c Command) []Flag {
	return append(slices.Clone(c.Flags), Flag{Name: "help", Usage: "show this command's help"})
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// oneLine is a summary fit for a completion menu.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Bash writes a bash completion script for the programs named (the first
// one names the function), for bash-completion's completions folder or to
// be sourced.
func Bash(w io.Writer, progs []string, top []Command, global []Flag) error {
	fn := "_" + strings.NewReplacer("-", "_", ".", "_").Replace(progs[0])
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s (generated from its command table: `%s completion bash`)\n\n", strings.Join(progs, ", "), progs[0])
	fmt.Fprintf(&b, "%s_spec() {\n\tcmds= flags= valflags=\n\tcase $1 in\n", fn)
	for _, n := range walk(top, global) {
		var cmds, flags, valflags []string
		for _, c := range n.cmd.Children {
			cmds = append(cmds, c.Name)
		}
		for _, f := range flagsOf(n.cmd) {
			flags = append(flags, "--"+f.Name)
			if f.Value {
				valflags = append(valflags, "--"+f.Name)
			}
		}
		fmt.Fprintf(&b, "\t%s) cmds=%s flags=%s valflags=%s ;;\n", shQuote(n.path),
			shQuote(strings.Join(cmds, " ")), shQuote(strings.Join(flags, " ")), shQuote(strings.Join(valflags, " ")))
	}
	b.WriteString("\tesac\n}\n\n")
	fmt.Fprintf(&b, `%[1]s() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmdpath= cmds flags valflags i w
	%[1]s_spec ""
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		[[ $w == -- ]] && break
		[[ $w == -* ]] && continue
		if [[ " $cmds " == *" $w "* ]]; then
			cmdpath+=/$w
			%[1]s_spec "$cmdpath"
		fi
	done
	if [[ -n $prev && " $valflags " == *" $prev "* ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	elif [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
	elif [[ -n $cmds ]]; then
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F %[1]s %[2]s
`, fn, strings.Join(progs, " "))
	_, err := io.WriteString(w, b.String())
	return err
}

// Zsh writes a zsh completion function (a file named _PROG in $fpath) for
// the programs named.
func Zsh(w io.Writer, progs []string, top []Command, global []Flag) error {
	fn := "_" + strings.NewReplacer("-", "_", ".", "_").Replace(progs[0])
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s (generated from its command table: `%s completion zsh`)\n\n", strings.Join(progs, " "), strings.Join(progs, ", "), progs[0])
	fmt.Fprintf(&b, "%s_spec() {\n\tcmds=() flags=() valflags=()\n\tcase $1 in\n", fn)
	for _, n := range walk(top, global) {
		var cmds, flags, valflags []string
		for _, c := range n.cmd.Children {
			cmds = append(cmds, shQuote(c.Name+":"+oneLine(c.Summary)))
		}
		for _, f := range flagsOf(n.cmd) {
			flags = append(flags, shQuote("--"+f.Name+":"+oneLine(f.Usage)))
			if f.Value {
				valflags = append(valflags, shQuote("--"+f.Name))
			}
		}
		fmt.Fprintf(&b, "\t%s) cmds=(%s) flags=(%s) valflags=(%s) ;;\n", shQuote(n.path),
			strings.Join(cmds, " "), strings.Join(flags, " "), strings.Join(valflags, " "))
	}
	b.WriteString("\tesac\n}\n\n")
	// $path is zsh's array tied to $PATH: the command path is cmdpath.
	fmt.Fprintf(&b, `%[1]s() {
	local cmdpath= w c i
	local -a cmds flags valflags
	%[1]s_spec ""
	for ((i = 2; i < CURRENT; i++)); do
		w=${words[i]}
		[[ $w == -- ]] && break
		[[ $w == -* ]] && continue
		for c in $cmds; do
			if [[ ${c%%%%:*} == $w ]]; then
				cmdpath+=/$w
				%[1]s_spec $cmdpath
				break
			fi
		done
	done
	if (( ${valflags[(Ie)${words[CURRENT-1]}]} )); then
		_files
	elif [[ ${words[CURRENT]} == -* ]]; then
		_describe -t flags flag flags
	elif (( $#cmds )); then
		_describe -t commands command cmds
	else
		_files
	fi
}

%[1]s "$@"
`, fn)
	_, err := io.WriteString(w, b.String())
	return err
}

// Fish writes fish completions for the program named (fish loads them from
// a file named PROG.fish, one per program).
func Fish(w io.Writer, prog string, top []Command, global []Flag) error {
	fn := "__" + strings.NewReplacer("-", "_", ".", "_").Replace(prog) + "_path"
	nodes := walk(top, global)
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s (generated from its command table: `%s completion fish`)\n\n", prog, prog)
	var paths []string
	for _, n := range nodes[1:] {
		paths = append(paths, shQuote(n.path))
	}
	fmt.Fprintf(&b, "set -g %s_known %s\n\n", fn, strings.Join(paths, " "))
	fmt.Fprintf(&b, `# The command path typed so far: "/config/list" for "%[2]s config list …".
function %[1]s
	set -l words (commandline -opc)
	set -e words[1]
	set -l p ""
	for w in $words
		test "$w" = "--"; and break
		string match -q -- "-*" $w; and continue
		contains -- "$p/$w" $%[1]s_known; and set p "$p/$w"
	end
	echo $p
end

complete -c %[2]s -f
`, fn, prog)
	for _, n := range nodes {
		cond := shQuote(fmt.Sprintf("test (%s) = %q", fn, n.path))
		for _, c := range n.cmd.Children {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", prog, cond, shQuote(c.Name), shQuote(oneLine(c.Summary)))
		}
		for _, f := range flagsOf(n.cmd) {
			value := ""
			if f.Value {
				value = " -r -F"
			}
			fmt.Fprintf(&b, "complete -c %s -n %s -l %s%s -d %s\n", prog, cond, shQuote(f.Name), value, shQuote(oneLine(f.Usage)))
		}
		if len(n.cmd.Children) == 0 && n.path != "" {
			fmt.Fprintf(&b, "complete -c %s -n %s -F\n", prog, cond)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
