package healthcheck

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// redirectReceiver is the loopback listener the authorization server
// redirects the browser to.
type redirectReceiver struct {
	ln          net.Listener
	srv         *http.Server
	redirectURL string
	results     chan callbackResult
	mu          sync.Mutex
	pending     bool // the browser was sent and has not come back
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

func newRedirectReceiver() (*redirectReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the sign-in redirect on 127.0.0.1: %w", err)
	}
	r := &redirectReceiver{ln: ln, results: make(chan callbackResult, 1),
		redirectURL: fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", r.callback)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *redirectReceiver) callback(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	var res callbackResult
	title, text := "Signed in", "mcptray has what it needs: you can close this tab."
	switch {
	case q.Get("error") != "":
		msg := q.Get("error")
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		res.err = fmt.Errorf("the authorization server refused the sign-in: %s", msg)
		title, text = "Sign-in refused", "The authorization server said: "+msg+". You can close this tab."
	case q.Get("code") == "":
		http.Error(w, "no authorization code in this request", http.StatusBadRequest)
		return
	default:
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	select {
	case r.results <- res:
	default: // a second redirect (a reload): the first one counts
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><title>mcptray: %s</title><body style=\"font-family:sans-serif;margin:3em\"><h1>%s</h1><p>%s</p></body>",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

func (r *redirectReceiver) wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	r.mu.Lock()
	r.pending = true
	r.mu.Unlock()
	select {
	case res := <-r.results:
		r.mu.Lock()
		r.pending = false
		r.mu.Unlock()
		return res.res, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *redirectReceiver) waiting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

func (r *redirectReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
}
