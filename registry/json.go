package registry

import "time"

// ServerJSON is the one JSON shape of a configured server: `config list
// --json` prints it and the control API carries it. Transport and restart
// are the effective values (a default left out of the file shows as the
// default). Secret values are as in the Server: take the JSON of
// [Server.Redacted] for output; the private socket carries them as written.
type ServerJSON struct {
	Name        string            `json:"name"`
	Kind        string            `json:"kind"`      // "stdio" or "remote"
	Transport   Transport         `json:"transport"` // stdio, http or sse
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Cwd         string            `json:"cwd,omitempty"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Start       StartMode         `json:"start"`              // effective: auto, lazy or manual
	Autostart   bool              `json:"autostart"`          // start is auto (the older key)
	IdleStop    string            `json:"idleStop,omitempty"` // as in the file ("10m"); absent for never
	Share       *bool             `json:"share"`              // nil (from an older mcptray) is true
	Restart     RestartPolicy     `json:"restart"`
	Disabled    bool              `json:"disabled"`
	Description string            `json:"description,omitempty"`
	Source      string            `json:"source,omitempty"` // registry:NAME@VERSION, mcpb:NAME@VERSION
	Line        int               `json:"line,omitempty"`   // of [servers.NAME] in the file
	Valid       bool              `json:"valid"`
	Error       string            `json:"error,omitempty"` // why it is not valid
}

// JSON is s in its JSON shape.
func (s *Server) JSON() ServerJSON {
	j := ServerJSON{
		Name: s.Name, Kind: "stdio", Transport: s.Transport(), Command: s.Command, Args: s.Args,
		Env: s.Env, Cwd: s.Cwd, URL: s.URL, Headers: s.Headers,
		Start: s.StartMode(), Autostart: s.StartMode() == StartAuto, Share: new(!s.Unshared),
		Restart: s.RestartPolicy(), Disabled: s.Disabled,
		Description: s.Description, Source: s.Source, Line: s.Line, Valid: s.Valid(),
	}
	if s.IdleStop > 0 {
		j.IdleStop = FormatDuration(s.IdleStop)
	}
	if s.IsRemote() {
		j.Kind = "remote"
	}
	if s.Invalid != nil {
		j.Error = s.Invalid.Error()
	}
	return j
}

// Server is the entry j describes. Defaults come back as left out
// (transport "http" of a url, restart "on-failure"), which means the same;
// an invalid entry's error comes back as its text.
func (j *ServerJSON) Server() *Server {
	s := &Server{
		Name: j.Name, Command: j.Command, Args: j.Args, Env: j.Env, Cwd: j.Cwd, URL: j.URL,
		Headers: j.Headers, Autostart: j.Autostart, Unshared: j.Share != nil && !*j.Share, Disabled: j.Disabled,
		Description: j.Description, Source: j.Source, Line: j.Line,
	}
	if j.Start == StartLazy || j.Start != "" && (j.Start == StartAuto) != j.Autostart {
		// Autostart says auto or manual by itself; only lazy (or an
		// odd pair) needs Start.
		s.Start = j.Start
	}
	if j.IdleStop != "" {
		s.IdleStop, _ = time.ParseDuration(j.IdleStop)
	}
	if j.Transport != TransportStdio && j.Transport != TransportHTTP {
		s.TransportName = j.Transport
	}
	if j.Restart != RestartOnFailure {
		s.Restart = j.Restart
	}
	if j.Error != "" {
		s.Invalid = &textError{j.Error}
	}
	return s
}

// textError is an error known by its text only.
type textError struct{ msg string }

func (e *textError) Error() string { return e.msg }
