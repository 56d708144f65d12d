// Command gendocs writes the shell completions and man pages the packages
// install, from the command table --help prints (app.Commands), so they
// never say something --help does not:
//
//	OUT/completions/mcptray.bash  mcptray-headless.bash (bash-completion loads by name)
//	OUT/completions/_mcptray      (zsh, for both programs)
//	OUT/completions/mcptray.fish  mcptray-headless.fish
//	OUT/man/mcptray.1.gz          mcptray-COMMAND.1.gz, one per command
//	OUT/changelog.gz              (the Debian changelog: this release)
//
// `make dist` runs it (a before hook in .goreleaser.yaml).
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"mcptray/app"
	"mcptray/app/cli"
	"mcptray/app/clidoc"
)

func main() {
	out := flag.String("out", "build/docs", "folder to write completions/ and man/ to")
	version := flag.String("version", app.Version, "the version the man pages name")
	date := flag.String("date", "", "the man pages' date (RFC 3339 or YYYY-MM-DD; default: today)")
	flag.Parse()
	if err := run(*out, *version, *date); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(out, version, date string) error {
	when := time.Now().UTC()
	if date != "" {
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, date); err != nil {
				return fmt.Errorf("-date %q: want RFC 3339 or YYYY-MM-DD", date)
			}
		}
		when = t.UTC()
	}
	day := when.Format(time.DateOnly)
	cmds, global := cli.Commands(), cli.GlobalFlags()
	progs := []string{"mcptray", "mcptray-headless"}
	files := map[string][]byte{}
	var b bytes.Buffer
	for _, p := range progs {
		b.Reset()
		if err := clidoc.Bash(&b, []string{p}, cmds, global); err != nil {
			return err
		}
		files["completions/"+p+".bash"] = bytes.Clone(b.Bytes())
		b.Reset()
		if err := clidoc.Fish(&b, p, cmds, global); err != nil {
			return err
		}
		files["completions/"+p+".fish"] = bytes.Clone(b.Bytes())
	}
	b.Reset()
	if err := clidoc.Zsh(&b, progs, cmds, global); err != nil {
		return err
	}
	files["completions/_mcptray"] = bytes.Clone(b.Bytes())

	pages := clidoc.Man(clidoc.ManInfo{
		Prog:    "mcptray",
		Version: version,
		Date:    day,
		Summary: "run and check the MCP servers on this machine",
		Description: `mcptray supervises the MCP (Model Context Protocol) servers configured in
servers.toml: it starts local ones, watches remote ones, restarts what
crashes, and is the one place AI clients reach them (mcptray connect NAME).
With no command it opens the desktop app, a tray icon and window; every
command also runs without a display.

Two builds are installed: mcptray, the desktop app with every command, and
mcptray-headless, the same commands without the desktop app (pure Go, no
GUI libraries). A command given to mcptray runs in mcptray-headless when it
sits beside it and is of the same version, as the packages install them;
MCPTRAY_NO_HANDOFF=1 runs it in the desktop build instead.

Exit status: 0 success, 1 failure, 2 usage or config errors.`,
		Global:  global,
		SeeAlso: []string{"mcptray-headless"},
	}, cmds)
	for _, p := range pages {
		gz, err := gzipped([]byte(p.Text))
		if err != nil {
			return err
		}
		files["man/"+p.Name+".gz"] = gz
	}
	// The Debian changelog lintian asks every package for: one entry, this
	// release.
	cl, err := gzipped(fmt.Appendf(nil, "mcptray (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- mcptray <maintainers@mcptray.dev>  %s\n",
		version, version, when.Format("Mon, 02 Jan 2006 15:04:05 -0700")))
	if err != nil {
		return err
	}
	files["changelog.gz"] = cl
	for name, data := range files {
		p := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// gzipped compresses at the best level with no name or time in the header,
// as Debian wants man pages (the same bytes from the same input).
func gzipped(data []byte) ([]byte, error) {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
