package gui

import (
	"fmt"
	"strings"

	"mcptray/registry"
	"mcptray/registry/clients"
)

// pastedName names an entry pasted without a name of its own.
const pastedName = clients.SnippetName

// parsePasted reads what a person copied: any shape `mcptray add --json`
// reads (clients.ParseSnippet: a client's JSON entry or file, Codex TOML, a
// command line). The first server is returned, with the importer's
// warnings.
func parsePasted(text string) (*registry.Server, []string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil, fmt.Errorf("the clipboard is empty: copy a server's entry from a client's config first")
	}
	im, err := clients.ParseSnippet(text)
	if err != nil {
		return nil, nil, err
	}
	warnings := im.Warnings
	if n := len(im.Servers); n > 1 {
		warnings = append(warnings, fmt.Sprintf("The pasted text holds %d servers; the form took the first, %s (use Import… for all of them).", n, im.Servers[0].Name))
	}
	return im.Servers[0], warnings, nil
}
