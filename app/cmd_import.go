package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"mcptray/registry"
	"mcptray/registry/clients"
	"mcptray/registry/secrets"
)

func init() {
	register(&command{
		name:    "import",
		summary: "copy the servers an AI client has configured into servers.toml",
		help: `Reads the file of --client (or --path) and adds its servers to servers.toml.
Names are kept (characters servers.toml does not allow become '-'); a name
servers.toml already has is reported and skipped unless --replace. The
client's secret syntax becomes ${env:VAR} (${VAR:-default} becomes
${env:VAR:-default}), and so do mcptray's own <VAR> placeholders; a literal
secret is kept, with a warning; fields mcptray does not model are reported.
The diff masks the secrets of every server, the ones already in
servers.toml included. An mcp-remote bridge
entry becomes the remote server it reaches. servers.toml is saved atomically
and the previous version kept as servers.toml.bak.

` + clientTable(),
		flags: cmdImport,
	})
}

func cmdImport(flagSet *flag.FlagSet) func(context.Context, *Env, []string) error {
	cfgPath := configFlag(flagSet)
	cf := addClientFlags(flagSet, false)
	path := flagSet.String("path", "", "read this file instead of the client's own")
	dryRun := flagSet.Bool("dry-run", false, "print what would change in servers.toml without writing")
	replace := flagSet.Bool("replace", false, "replace servers that already exist in servers.toml")
	toKeyring := flagSet.Bool("keyring", false, "move the literal secrets of the imported servers (env and header values) into the OS keyring and write ${keyring:NAME} references (asked on a terminal)")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("takes no arguments")
		}
		c, err := cf.lookup()
		if err != nil {
			return err
		}
		o, err := cf.options(ctx, env)
		if err != nil {
			return err
		}
		file := *path
		if file == "" {
			if file, err = c.Path(o); err != nil {
				return err
			}
		}
		data, err := registry.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s has no config file at %s (pass --path to read another)", c.Name, file)
		}
		if err != nil {
			return err
		}
		im, err := c.Import(file, data, o)
		if err != nil {
			return err
		}
		// Nothing is written before the save: a dry run leaves no trace, and
		// a config that does not exist yet is created (with the default
		// comments) by the save, as first run does.
		loc, err := registry.Locate(*cfgPath)
		if err != nil {
			return configError{err}
		}
		cfg, err := registry.OpenForUpdate(loc, env.Exe)
		if err != nil {
			return configError{err}
		}
		old := cfg.Saved()
		// Every server's secrets, the ones replaced and the neighbours'
		// included, are masked in the diff.
		var secrets []string
		for _, s := range append(slices.Clone(cfg.Servers), im.Servers...) {
			secrets = append(secrets, s.Secrets()...)
		}
		lits := literalSecrets(im.Servers)
		if len(lits) > 0 && !*toKeyring {
			*toKeyring = askYesNo(env, fmt.Sprintf("%d literal secret(s) in what is imported (%s). Keep them in the keyring instead of servers.toml?", len(lits), strings.Join(lits, ", ")))
			if !*toKeyring {
				fmt.Fprintf(env.Stderr, "mcptray import: note: %d literal secret(s) will be written into servers.toml; pass --keyring to keep them in the OS keyring\n", len(lits))
			}
		}
		var moved *movedSecrets
		if len(lits) > 0 && *toKeyring {
			st, err := openSecrets(env)
			if err != nil {
				return err
			}
			moved = moveToKeyring(im.Servers, st)
		}
		for _, w := range im.Warnings {
			if moved != nil && strings.Contains(w, "holds a literal secret") {
				continue // it is going to the keyring
			}
			fmt.Fprintf(env.Stderr, "mcptray import: warning: %s\n", w)
		}
		if c.Unverified != "" {
			fmt.Fprintf(env.Stderr, "mcptray import: note: unverified: %s.\n", c.Unverified)
		}
		var added, replaced, skipped []string
		for _, s := range im.Servers {
			if i := indexServer(cfg, s.Name); i >= 0 {
				if !*replace {
					skipped = append(skipped, s.Name)
					fmt.Fprintf(env.Stderr, "mcptray import: conflict: servers.toml already has %q: skipped (--replace to overwrite)\n", s.Name)
					continue
				}
				cfg.Servers[i] = s
				replaced = append(replaced, s.Name)
				continue
			}
			cfg.Servers = append(cfg.Servers, s)
			added = append(added, s.Name)
		}
		next := registry.Encode(cfg)
		if d := clients.UnifiedDiff(cfg.Path, cfg.Path, old, next); d != "" && len(added)+len(replaced) > 0 {
			fmt.Fprint(env.Stdout, registry.MaskSecrets(d, secrets))
		}
		summary := fmt.Sprintf("%d found in %s: %d added, %d replaced, %d skipped", len(im.Servers), file, len(added), len(replaced), len(skipped))
		switch {
		case len(added)+len(replaced) == 0:
			fmt.Fprintf(env.Stdout, "%s: nothing to change (%s)\n", cfg.Path, summary)
			return nil
		case *dryRun:
			fmt.Fprintf(env.Stdout, "%s: would be changed (%s); dry run, nothing written\n", cfg.Path, summary)
			if moved != nil {
				fmt.Fprintf(env.Stdout, "would keep %d secret(s) in %s: %s\n", len(moved.values), moved.store.Where(), strings.Join(moved.names(), ", "))
			}
			return nil
		}
		if moved != nil {
			if err := moved.persist(); err != nil {
				return err
			}
		}
		if err := registry.Save(cfg); err != nil {
			if moved != nil {
				moved.undo()
			}
			return err
		}
		if moved != nil {
			fmt.Fprintf(env.Stdout, "kept %d secret(s) in %s: %s (servers.toml refers to them as ${keyring:NAME})\n", len(moved.values), moved.store.Where(), strings.Join(moved.names(), ", "))
		}
		if old == nil {
			fmt.Fprintf(env.Stdout, "%s: created with the default config (%s)\n", cfg.Path, summary)
		} else {
			fmt.Fprintf(env.Stdout, "%s: %s; previous version: %s.bak\n", cfg.Path, summary, cfg.Path)
		}
		if len(added) > 0 {
			fmt.Fprintf(env.Stdout, "added: %s\n", strings.Join(added, ", "))
		}
		return nil
	}
}

func indexServer(cfg *registry.Config, name string) int {
	for i, s := range cfg.Servers {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// literalSecrets names the env and header values of servers that hold a
// literal secret ("github env.GITHUB_TOKEN").
func literalSecrets(servers []*registry.Server) []string {
	var out []string
	for _, s := range servers {
		for _, k := range sortedKeys(s.Env) {
			if secretField(k) && isLiteralSecret(s.Env[k]) {
				out = append(out, s.Name+" env."+k)
			}
		}
		for _, k := range sortedKeys(s.Headers) {
			if secretField(k) && isLiteralSecret(s.Headers[k]) {
				out = append(out, s.Name+" headers."+k)
			}
		}
	}
	return out
}

func isLiteralSecret(v string) bool {
	return len((&registry.Server{Env: map[string]string{"v": v}}).Secrets()) > 0
}

// secretField reports whether an env or header name holds a credential
// (API_KEY, GITHUB_TOKEN, Authorization, …): only those are moved to the
// keyring; LOG_LEVEL=debug stays in servers.toml.
func secretField(name string) bool {
	return registry.SecretName(name) || strings.EqualFold(name, "Authorization")
}

// KeepSecrets moves s's literal secrets (env and header values under
// credential names) into the secret store at once, and returns a copy of s
// that refers to them as ${keyring:SERVER.KEY}, the names stored and where.
// The app's server form uses it.
func KeepSecrets(env *Env, s *registry.Server) (*registry.Server, []string, string, error) {
	st, err := openSecrets(env)
	if err != nil {
		return nil, nil, "", err
	}
	c := s.Clone()
	m := moveToKeyring([]*registry.Server{c}, st)
	if err := m.persist(); err != nil {
		return nil, nil, "", err
	}
	return c, m.names(), st.Where(), nil
}

// movedSecrets are literal secrets taken out of servers, to be stored.
type movedSecrets struct {
	store  secrets.Store
	values map[string]string // secret name → value
	stored []string
}

func (m *movedSecrets) names() []string { return sortedKeys(m.values) }

// moveToKeyring replaces each literal env and header value of servers by a
// ${keyring:SERVER.KEY} reference ("Bearer abc" keeps its scheme: "Bearer
// ${keyring:…}") and returns the values to store.
func moveToKeyring(servers []*registry.Server, st secrets.Store) *movedSecrets {
	m := &movedSecrets{store: st, values: map[string]string{}}
	name := func(server, key string) string {
		n := secretNameFor(server + "." + key)
		for i := 2; ; i++ {
			if _, taken := m.values[n]; !taken {
				return n
			}
			n = fmt.Sprintf("%s-%d", secretNameFor(server+"."+key), i)
		}
	}
	for _, s := range servers {
		for _, k := range sortedKeys(s.Env) {
			if v := s.Env[k]; secretField(k) && isLiteralSecret(v) {
				n := name(s.Name, k)
				m.values[n] = v
				s.Env[k] = "${keyring:" + n + "}"
			}
		}
		for _, k := range sortedKeys(s.Headers) {
			v := s.Headers[k]
			if !secretField(k) || !isLiteralSecret(v) {
				continue
			}
			n := name(s.Name, k)
			scheme, rest, ok := strings.Cut(v, " ")
			if ok && slices.Contains([]string{"bearer", "basic", "token"}, strings.ToLower(scheme)) && !strings.Contains(rest, " ") {
				m.values[n] = rest
				s.Headers[k] = scheme + " ${keyring:" + n + "}"
			} else {
				m.values[n] = v
				s.Headers[k] = "${keyring:" + n + "}"
			}
		}
	}
	return m
}

// secretNameFor makes a valid secret name of s.
func secretNameFor(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.", r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// persist writes the secrets; on a failure the ones written are removed.
func (m *movedSecrets) persist() error {
	for _, n := range m.names() {
		if err := m.store.Set(secrets.SecretKey(n), m.values[n]); err != nil {
			m.undo()
			return fmt.Errorf("keep %s in %s: %w (nothing imported)", n, m.store.Where(), err)
		}
		m.stored = append(m.stored, n)
	}
	return nil
}

func (m *movedSecrets) undo() {
	for _, n := range m.stored {
		_ = m.store.Delete(secrets.SecretKey(n))
	}
	m.stored = nil
}
