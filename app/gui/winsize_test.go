package gui

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"mcptray/app"
	"mcptray/healthcheck/authtest"
	"mcptray/registry"
)

// TestWindowKeepsItsSize: the window stays the size it was given across
// what once grew it past the screen: Ctrl+A over 30 servers (the names
// listed one a line), a server with a long command, and a remote server
// that needs sign-in (its state from a real check against a real OAuth
// protected MCP server).
func TestWindowKeepsItsSize(t *testing.T) {
	p := authtest.Start(t)
	t.Setenv("MCPTRAY_KEYRING", "file")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	remote := &registry.Server{Name: "prot", URL: p.MCPURL, Autostart: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	signIn := app.CheckServer(ctx, &registry.Config{}, remote, 30*time.Second)
	if !needsSignIn(&signIn) {
		t.Fatalf("the protected server's check does not ask for sign-in: %s %s %+v", signIn.State, signIn.Reason, signIn.Diagnosis)
	}

	snap := manySnapshot(30)
	long := snap.Servers[0]
	long.Name = "long"
	srv := *long.Server
	srv.Name, srv.Command = "long", "/opt/"+strings.Repeat("very-long-folder-name/", 12)+"server"
	srv.Args = []string{"--config", "/home/someone/" + strings.Repeat("a-long-path-", 20) + "config.json", strings.Repeat("--flag-without-spaces-", 10)}
	long.Server, long.Command = &srv, srv.Command
	snap.Servers = append(snap.Servers, long, signIn)

	c := newTestController(t, newFakeEngine(snap), "")
	c.apply(c.eng.Snapshot())
	m := c.main
	want := fyne.NewSize(1100, 700)
	c.win.Resize(want)
	check := func(what string) {
		t.Helper()
		if got := c.win.Canvas().Size(); got != want {
			t.Errorf("after %s the window is %v, want %v", what, got, want)
		}
		// A window of the desktop driver grows to its content's minimum
		// size (the test driver's does not), and the window caps what its
		// content asks for; the content itself must fit all the same.
		if min := m.content.MinSize(); min.Width > want.Width || min.Height > want.Height {
			t.Errorf("after %s the window's content asks for %v: the window would grow past %v", what, min, want)
		}
	}
	check("opening")
	m.selectServer("long")
	check("selecting a server with a long command")
	m.selectServer("prot")
	check("selecting a server that needs sign-in")
	m.shortcut(shortcutSelectAll)
	if len(m.servers.Selected()) != len(snap.Servers) {
		t.Fatalf("Ctrl+A selected %d of %d", len(m.servers.Selected()), len(snap.Servers))
	}
	check("Ctrl+A")
}
