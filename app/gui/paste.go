package gui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"

	"mcptray/registry"
	"mcptray/registry/clients"
)

// pastedName names an entry pasted without a name of its own.
const pastedName = "pasted"

// parsePasted reads what a person copied from an AI client's config: one
// entry ({"command": …, "args": …, "env": …} or {"url": …}), a named entry
// ("github": {…}), or a whole file ({"mcpServers": {…}}, VS Code's
// {"servers": {…}}). The client importers read it, so secrets references
// and the mcp-remote bridge come back as they do in Import. The first
// server is returned, with the importer's warnings.
func parsePasted(text string) (*registry.Server, []string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil, errors.New("the clipboard is empty: copy a server's entry from a client's config first")
	}
	obj := func(s string) map[string]any {
		std, err := hujson.Standardize([]byte(s))
		if err != nil {
			return nil
		}
		var m map[string]any
		if json.Unmarshal(std, &m) != nil {
			return nil
		}
		return m
	}
	clientID, data := "claude-code", "" // mcpServers, with ${VAR} references
	m := obj(text)
	if m == nil {
		// `"github": {…}` as cut out of a file.
		if obj("{"+text+"}") != nil {
			data = `{"mcpServers": {` + text + `}}`
		}
	} else {
		_, hasMCP := m["mcpServers"]
		_, hasServers := m["servers"]
		_, hasCommand := m["command"]
		_, hasURL := m["url"]
		_, hasHTTP := m["httpUrl"]
		_, hasServerURL := m["serverUrl"]
		switch {
		case hasMCP:
			data = text
		case hasServers:
			clientID, data = "vscode", text
		case hasCommand || hasURL || hasHTTP || hasServerURL:
			data = `{"mcpServers": {"` + pastedName + `": ` + text + `}}`
		default:
			data = `{"mcpServers": ` + text + `}`
		}
	}
	if data == "" {
		return nil, nil, errors.New(`the clipboard does not hold a client's JSON entry: copy {"command": …} or {"url": …}, or a whole {"mcpServers": {…}}`)
	}
	cl, err := clients.Lookup(clientID)
	if err != nil {
		return nil, nil, err
	}
	im, err := cl.Import("the pasted text", []byte(data), nil)
	if err != nil {
		return nil, nil, err
	}
	if len(im.Servers) == 0 {
		if len(im.Warnings) > 0 {
			return nil, nil, errors.New(strings.Join(im.Warnings, "; "))
		}
		return nil, nil, errors.New("the pasted text holds no server entry")
	}
	warnings := im.Warnings
	if n := len(im.Servers); n > 1 {
		warnings = append(warnings, fmt.Sprintf("The pasted text holds %d servers; the form took the first, %s (use Import… for all of them).", n, im.Servers[0].Name))
	}
	return im.Servers[0], warnings, nil
}
