package supervisor

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"mcptray/registry"
)

// RunDirect runs one stdio server on the given stdin and stdout, with no
// health check and no restart, as `mcptray connect` does when there is no
// daemon to relay to. The process is started the way the supervisor
// starts its servers: the environment from opts.Environ (the login
// shell's by default) with the entry's env on top, references expanded
// (opts.Secret for ${keyring:…}), the command resolved in that PATH, in a
// process group (and cgroup) of its own with the parent-death signal, its
// family tracked and recorded in opts.ProcDir so a next supervisor ends
// what is left if this process is killed. stderr is copied to stderr as
// it comes.
//
// It returns when the server has exited (the client's end of stdin makes
// it exit: its stdin is closed), or ctx ended (then it is stopped with
// StopGrace and KillGrace), with everything it started ended. exit is how
// it ended; err is a problem with the entry or the start.
func RunDirect(ctx context.Context, srv *registry.Server, stdin io.Reader, stdout, stderr io.Writer, opts *Options) (exit ExitInfo, err error) {
	o := opts.withDefaults()
	if srv.IsRemote() {
		return ExitInfo{}, errors.New(srv.Name + " is a remote server: there is no process to run")
	}
	env := o.Environ(ctx)
	exp, err := srv.ExpandWith(lookupIn(env), o.Secret)
	if err != nil {
		return ExitInfo{}, err
	}
	dir := exp.Cwd
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return ExitInfo{}, diagBadCwd(srv.Cwd, err)
		}
	}
	env = mergeEnv(env, exp.Env)
	name := exp.Command
	if dir != "" && !filepath.IsAbs(name) && strings.ContainsAny(name, pathSeparators) {
		name = filepath.Join(dir, name)
	}
	path, err := ResolveCommand(name, env)
	if err != nil {
		return ExitInfo{}, err
	}
	records := newProcRecords(o.ProcDir, o.Logger)
	cleanStaleRecords(o.ProcDir, o.Logger)
	p, err := spawn(spawnSpec{Path: path, Args: exp.Args, Env: env, Dir: dir, Name: srv.Name, Records: records, Stderr: stderr},
		nil, nil, o.MaxLineBytes, o.Clock.Now)
	if err != nil {
		return ExitInfo{}, err
	}
	go func() {
		io.Copy(p.stdin, stdin)
		p.stdin.Close() // the client is done: the MCP way to ask a stdio server to exit
	}()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(stdout, p.stdout)
	}()
	select {
	case <-p.exited:
		<-copied // what it wrote before it exited reaches the client
	case <-ctx.Done():
	}
	p.stopping()
	p.stop(o.Clock, o.StopGrace, o.KillGrace)
	return p.exit, nil
}
