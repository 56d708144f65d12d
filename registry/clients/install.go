package clients

import (
	"bytes"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"mcptray/registry"
)

// Change is the result of merging entries into (or removing them from) a
// client's file.
type Change struct {
	Client *Client
	Path   string
	// Old is the file as read (nil when it did not exist); New what it
	// becomes. Equal when nothing changes.
	Old, New []byte
	Existed  bool
	// Added, Updated, Removed, Unchanged name the entries by outcome.
	Added, Updated, Removed, Unchanged []string
	// Switched are the updated entries whose route changes: a direct entry
	// now through mcptray, or the reverse.
	Switched []Switch
	// Backup is the copy of the old file written beside it ("" when none).
	Backup string
	// Warnings and Notes as in [Result].
	Warnings, Notes []string
	// secrets are literal values to mask in Diff.
	secrets []string
	reveal  bool
}

// Changed reports whether the file changes.
func (ch *Change) Changed() bool { return !bytes.Equal(ch.Old, ch.New) }

// Diff is a unified diff from the old file to the new one. Every secret
// either file holds (env and header values, credentials in URLs, of every
// entry, not only the ones written), and the value of every other key named
// like a secret (~/.claude.json's primaryApiKey, an OAuth accessToken) in
// the lines around them, is masked unless secrets were revealed.
func (ch *Change) Diff() string { return ch.diff(!ch.reveal) }

// MaskedDiff is [Change.Diff] with every secret masked, revealed or not:
// what a window shows of a change that writes secrets' values.
func (ch *Change) MaskedDiff() string { return ch.diff(true) }

func (ch *Change) diff(mask bool) string {
	a, b := ch.Path, ch.Path
	if !ch.Existed {
		a = "/dev/null"
	}
	d := UnifiedDiff(a, b, ch.Old, ch.New)
	if !mask {
		return d
	}
	return ch.Client.maskSecretFields(registry.MaskSecrets(d, ch.secrets))
}

// SwitchLines says, one line per entry, which entries change route ("files:
// direct entry (npx -y pkg) → through mcptray (mcptray connect files)"),
// secrets masked as in Diff.
func (ch *Change) SwitchLines() []string { return ch.switchLines(!ch.reveal) }

// MaskedSwitchLines are [Change.SwitchLines] with every secret masked.
func (ch *Change) MaskedSwitchLines() []string { return ch.switchLines(true) }

func (ch *Change) switchLines(mask bool) []string {
	var out []string
	for _, sw := range ch.Switched {
		l := sw.String()
		if mask {
			l = registry.MaskSecrets(l, ch.secrets)
		}
		out = append(out, l)
	}
	return out
}

// managedKeys are the entry keys mcptray writes for this client; on update,
// every other key of an existing entry is kept.
func (c *Client) managedKeys() map[string]bool {
	sh := c.shape
	m := map[string]bool{"type": true, "url": true, "serverUrl": true, "httpUrl": true, "uri": true,
		"command": true, "args": true, "env": true, "headers": true}
	for _, k := range []string{sh.command, sh.args, sh.env, sh.cwd, sh.url, sh.httpURL} {
		if k != "" {
			m[k] = true
		}
	}
	if len(sh.headers) > 0 {
		m[sh.headers[0]] = true
	}
	if sh.name {
		m["name"] = true
	}
	if sh.codex {
		for _, k := range []string{"env_vars", "bearer_token_env_var", "env_http_headers", "http_headers"} {
			m[k] = true
		}
	}
	for _, e := range sh.extra {
		m[e.K] = true
	}
	return m
}

// Merge adds or updates servers' entries in src (the file's content; nil or
// empty for a new file). Every other key, and comments in JSONC files, stay.
// file is used in messages.
func (c *Client) Merge(file string, src []byte, servers []*registry.Server, opts *Options) (*Change, error) {
	o := opts.withDefaults()
	if o.Scope == "" {
		o.Scope = c.scopes[0]
	}
	if err := c.checkReadable(file, src); err != nil {
		return nil, err
	}
	existing := map[string]*registry.Server{}
	if im, err := c.importAll(file, src, o); err == nil {
		for _, s := range im.Servers {
			existing[s.Name] = s
		}
	}
	bs, b, err := c.buildWith(servers, o, false, existing)
	if err != nil {
		return nil, err
	}
	ch := &Change{Client: c, Path: file, Old: src, Existed: src != nil, reveal: o.RevealSecrets}
	cur := c.startContent(src)
	key := c.keyPath(o)
	managed := c.managedKeys()
	record := func(name, how string) {
		switch how {
		case "added":
			ch.Added = append(ch.Added, name)
		case "updated":
			ch.Updated = append(ch.Updated, name)
		default:
			ch.Unchanged = append(ch.Unchanged, name)
		}
	}
	switch c.Format {
	case FormatJSON, FormatJSONC:
		for _, s := range bs {
			var how string
			if cur, how, err = jsonSet(file, cur, c.Format, key, s.name, s.entry, managed); err != nil {
				return nil, err
			}
			record(s.name, how)
		}
	case FormatTOML:
		for _, s := range bs {
			var how string
			if cur, how, err = tomlSet(file, cur, key[0], s.name, s.entry, managed); err != nil {
				return nil, err
			}
			record(s.name, how)
		}
	case FormatYAML:
		cur, err = yamlEdit(file, cur, func(doc *yaml.Node) (bool, error) {
			changed := false
			for _, s := range bs {
				how, err := yamlSet(file, doc, key, c.List, s.name, s.entry, managed)
				if err != nil {
					return false, err
				}
				record(s.name, how)
				changed = changed || how != ""
			}
			return changed, nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(ch.Added)+len(ch.Updated) == 0 {
		cur = src
	}
	ch.New = cur
	for _, s := range bs {
		old := existing[s.name]
		if old == nil || !slices.Contains(ch.Updated, s.name) {
			continue
		}
		if from, to := RouteOf(old), RouteOf(s.srv); from != to {
			ch.Switched = append(ch.Switched, Switch{Name: s.name, From: from, To: to,
				Was: commandLine(old, o.RevealSecrets), Is: commandLine(s.srv, o.RevealSecrets)})
		}
	}
	ch.secrets = append(append(b.secrets, c.fileSecrets(file, src, o)...), c.fileSecrets(file, cur, o)...)
	ch.Warnings, ch.Notes = b.warnings, b.notes
	if c.Unverified != "" {
		ch.Notes = append(ch.Notes, "unverified: "+c.Unverified+".")
	}
	return ch, nil
}

// startContent is what editing starts from when the file is empty or new.
func (c *Client) startContent(src []byte) []byte {
	if len(bytes.TrimSpace(src)) > 0 {
		return bytes.Clone(src)
	}
	switch c.Format {
	case FormatJSON, FormatJSONC:
		return []byte("{}\n")
	case FormatYAML:
		return []byte(c.newFile)
	}
	return nil
}

// Remove deletes the named entries from src. A name that is not there is
// not an error; it is reported in Unchanged.
func (c *Client) Remove(file string, src []byte, names []string, opts *Options) (*Change, error) {
	o := opts.withDefaults()
	if o.Scope == "" {
		o.Scope = c.scopes[0]
	}
	if err := c.checkReadable(file, src); err != nil {
		return nil, err
	}
	ch := &Change{Client: c, Path: file, Old: src, Existed: src != nil, New: src, secrets: c.fileSecrets(file, src, o)}
	if len(bytes.TrimSpace(src)) == 0 {
		ch.Unchanged = names
		return ch, nil
	}
	cur := bytes.Clone(src)
	key := c.keyPath(o)
	var err error
	record := func(name string, removed bool) {
		if removed {
			ch.Removed = append(ch.Removed, name)
		} else {
			ch.Unchanged = append(ch.Unchanged, name)
		}
	}
	switch c.Format {
	case FormatJSON, FormatJSONC:
		for _, n := range names {
			var ok bool
			if cur, ok, err = jsonDelete(file, cur, c.Format, key, n); err != nil {
				return nil, err
			}
			record(n, ok)
		}
	case FormatTOML:
		for _, n := range names {
			var ok bool
			if cur, ok, err = tomlDelete(file, cur, key[0], n); err != nil {
				return nil, err
			}
			record(n, ok)
		}
	case FormatYAML:
		cur, err = yamlEdit(file, cur, func(doc *yaml.Node) (bool, error) {
			changed := false
			for _, n := range names {
				ok, err := yamlDelete(file, doc, key, c.List, n)
				if err != nil {
					return false, err
				}
				record(n, ok)
				changed = changed || ok
			}
			return changed, nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(ch.Removed) > 0 {
		ch.New = cur
	}
	return ch, nil
}

// FileOptions tunes [Client.Install] and [Client.Uninstall].
type FileOptions struct {
	// Path overrides the client's file.
	Path string
	// DryRun computes the change without writing.
	DryRun bool
	// Now stamps the backup's name (default time.Now).
	Now func() time.Time
}

// BackupName is the backup written beside path before it is replaced.
func BackupName(path string, t time.Time) string {
	return path + ".mcptray-backup-" + t.UTC().Format("20060102T150405Z")
}

func (c *Client) filePath(opts *Options, fo *FileOptions) (string, error) {
	if fo != nil && fo.Path != "" {
		return fo.Path, nil
	}
	return c.Path(opts)
}

// Install merges servers into the client's file and writes it atomically,
// keeping a timestamped backup beside it. A file that does not parse is
// refused (*ParseError) and left untouched.
func (c *Client) Install(servers []*registry.Server, opts *Options, fo *FileOptions) (*Change, error) {
	return c.editFile(opts, fo, func(path string, old []byte) (*Change, error) {
		return c.Merge(path, old, servers, opts)
	})
}

// Uninstall removes the named entries from the client's file, like Install.
func (c *Client) Uninstall(names []string, opts *Options, fo *FileOptions) (*Change, error) {
	return c.editFile(opts, fo, func(path string, old []byte) (*Change, error) {
		return c.Remove(path, old, names, opts)
	})
}

// editFile reads the client's file, computes the change and writes it, all
// under the file's lock, through symbolic links, redone on the new content
// when the client writes the file meanwhile (see [registry.EditFile]).
func (c *Client) editFile(opts *Options, fo *FileOptions, change func(path string, old []byte) (*Change, error)) (*Change, error) {
	path, err := c.filePath(opts, fo)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if fo != nil && fo.Now != nil {
		now = fo.Now
	}
	var ch *Change
	e, err := registry.EditFile(path, &registry.WriteOptions{
		Perm:   0o600,
		Backup: path + ".mcptray-backup", // BackupName's form
		Stamp:  now,
		DryRun: fo != nil && fo.DryRun,
	}, func(old []byte) ([]byte, error) {
		var err error
		if ch, err = change(path, old); err != nil {
			return nil, err
		}
		return ch.New, nil
	})
	if err != nil {
		return nil, err
	}
	ch.New, ch.Backup = e.New, e.Backup // New with the file's line endings
	return ch, nil
}
