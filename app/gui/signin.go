package gui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/healthcheck"
	"mcptray/supervisor"
)

// needsSignIn reports whether a remote server waits for a person to sign
// in (the health check said so).
func needsSignIn(s *supervisor.ServerState) bool {
	if s.State == supervisor.StateSignIn {
		return true
	}
	// A snapshot from the socket carries no error causes: the fix says
	// whether a sign-in helps.
	return s.Server != nil && s.Server.URL != "" && s.Diagnosis != nil && s.Diagnosis.Code == healthcheck.CodeAuthRequired &&
		strings.HasPrefix(s.Diagnosis.Fix, "Sign in:")
}

// signInTimeout is how long the browser flow may take.
const signInTimeout = 5 * time.Minute

// signIn runs the sign-in flow for a server in the browser (the Sign in
// action of the tray and the window), keeps the tokens, and restarts the
// server so that it connects with them. A dialog says what is happening
// and can cancel it.
func (c *controller) signIn(name string) {
	var srvState *supervisor.ServerState
	snap := c.eng.Snapshot()
	for i := range snap.Servers {
		if snap.Servers[i].Name == name {
			srvState = &snap.Servers[i]
		}
	}
	if srvState == nil || srvState.Server == nil || srvState.Server.URL == "" {
		c.showError(fmt.Errorf("sign in: %s is not a remote server", name))
		return
	}
	srv, err := srvState.Server.Expand(c.env.LookupEnv)
	if err != nil {
		c.showError(fmt.Errorf("sign in to %s: %w", name, err))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), signInTimeout)
	status := widget.NewLabel("Opening your browser…")
	status.Wrapping = fyne.TextWrapWord
	link := widget.NewLabel("")
	link.Selectable = true
	link.Wrapping = fyne.TextWrapBreak
	link.Hide()
	var d dialog.Dialog
	if c.win != nil {
		d = dialog.NewCustom("Sign in to "+name, "Cancel", container.NewVBox(status, link), c.win)
		d.SetOnClosed(cancel)
		d.Resize(fyne.NewSize(560, 160))
		d.Show()
	}
	go func() {
		defer cancel()
		_, where, err := app.SignIn(ctx, c.env, srv, &app.SignInOptions{OnBrowser: func(authURL string) {
			fyne.Do(func() {
				status.SetText("Complete the sign-in in your browser. If it did not open, visit this address:")
				link.SetText(authURL)
				link.Show()
			})
		}})
		fyne.Do(func() {
			if d != nil {
				d.Hide()
			}
			switch {
			case errors.Is(err, context.Canceled):
				// Cancelled by the person: nothing to say.
			case err != nil:
				c.showError(errors.New(signInWords(name, srv.URL, err)))
			default:
				c.app.SendNotification(fyne.NewNotification("mcptray", fmt.Sprintf("Signed in to %s; the tokens are kept in %s.", name, where)))
				c.restart(name)
			}
		})
	}()
}

// signInWords says why a sign-in to the server name at addr failed: a
// sentence first (what failed and what to check), then the error in full
// for whoever needs the detail. The error alone is a chain of every layer
// it went through ("sign-in: calling "initialize": sending …").
func signInWords(name, addr string, err error) string {
	host := addr
	if u, perr := url.Parse(addr); perr == nil && u.Host != "" {
		host = u.Host
	}
	var op *net.OpError
	var why string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		why = fmt.Sprintf("it did not complete within %s. Start it again when you can finish it in the browser.", signInTimeout)
	case errors.As(err, &op):
		why = fmt.Sprintf("mcptray could not reach %s (%s). Check that the server runs and that its address in servers.toml is right.", host, innermost(err))
	default:
		why = fmt.Sprintf("%s answered %q.", host, innermost(err))
	}
	return fmt.Sprintf("Could not sign in to %s: %s\n\nIn full: %v", name, why, err)
}

// innermost is what the last error of a chain says.
func innermost(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	text := err.Error()
	if i := strings.LastIndex(text, ": "); i >= 0 {
		text = text[i+2:]
	}
	return text
}
