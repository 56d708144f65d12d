package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"mcptray/healthcheck"
)

// What the server sends every session (log messages, list changes,
// resource updates) and what it sends one (progress) goes through a queue
// per session: the upstream's handler only queues, and each session's
// queue is written by a goroutine of its own, so a client that reads
// nothing (a suspended terminal, a frozen window) holds up no other
// session and not the server. A session whose queue is full loses the
// notification: counted in its [Session], and said in the trace.
//
// A `mcptray connect` session has a second, smaller queue below this one,
// in its connection (see [LineTransport]), which answers and the SDK's own
// notifications go through too: when it is full, the session's writers
// wait, the one of this queue included, and this queue fills.

// outboxSize is how many notifications may wait for one session.
const outboxSize = 1024

// dropNoteEvery is how often the trace says a session loses
// notifications, while it does.
const dropNoteEvery = time.Second

// outbox is one client session's queue of notifications.
type outbox struct {
	mu      sync.Mutex // protects the fields below
	queue   []func()
	running bool
}

// post queues send for cl, reporting false when the queue is full (the
// notification is dropped and counted).
func (h *hub) post(cl *client, send func()) bool {
	return h.enqueue(cl, send, true)
}

// enqueue is post; a full queue counts a drop only for a notification.
func (h *hub) enqueue(cl *client, send func(), note bool) bool {
	ob := &cl.out
	ob.mu.Lock()
	if len(ob.queue) >= outboxSize {
		ob.mu.Unlock()
		if note {
			h.dropped(cl, 1)
		}
		return false
	}
	ob.queue = append(ob.queue, send)
	start := !ob.running
	ob.running = true
	ob.mu.Unlock()
	if start {
		h.drains.Go(func() { h.drain(ob) })
	}
	return true
}

// drain sends what is queued, and ends when the queue is empty.
func (h *hub) drain(ob *outbox) {
	for {
		ob.mu.Lock()
		batch := ob.queue
		ob.queue = nil
		if len(batch) == 0 {
			ob.running = false
			ob.mu.Unlock()
			return
		}
		ob.mu.Unlock()
		for _, send := range batch {
			send()
		}
	}
}

// flushWait bounds how long an answer waits for its progress to be sent.
const flushWait = time.Second

// flush waits until what is queued for cl now has been sent, at most d.
func (h *hub) flush(cl *client, d time.Duration) {
	sent := make(chan struct{})
	if !h.enqueue(cl, func() { close(sent) }, false) {
		return
	}
	select {
	case <-sent:
	case <-time.After(d):
	}
}

// dropped counts n notifications cl lost, and says so in the trace (once
// per [dropNoteEvery] while it goes on).
func (h *hub) dropped(cl *client, n int64) {
	now := h.g.opts.Clock.Now()
	cl.mu.Lock()
	cl.drops += n
	total := cl.drops
	note := cl.dropNoted.IsZero() || now.Sub(cl.dropNoted) >= dropNoteEvery
	if note {
		cl.dropNoted = now
	}
	cl.mu.Unlock()
	if note {
		h.trace.add(Frame{
			Time: now, Session: cl.id, Dir: healthcheck.DirClientOut, Kind: "dropped",
			Body: fmt.Sprintf("mcptray dropped notifications for this session: its client reads too slowly (%d so far)", total),
		})
	}
}

// closedBy records that the gateway closed cl's connection, and why.
func (h *hub) closedBy(cl *client, why string) {
	h.g.opts.Logger.Warn("a client session was closed", "session", cl.id, "why", why)
	h.trace.add(Frame{Time: h.g.opts.Clock.Now(), Session: cl.id, Dir: healthcheck.DirClientOut, Kind: "closed", Body: why})
}

// serial runs what a hub sends its fronts (resource updates) in order, on
// a goroutine of its own: the SDK sends them to one session after another.
type serial struct {
	mu      sync.Mutex
	queue   []func()
	running bool
	drops   int64
}

func (h *hub) postAll(send func()) {
	s := &h.all
	s.mu.Lock()
	if len(s.queue) >= outboxSize {
		s.drops++
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, send)
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		h.drains.Go(func() {
			for {
				s.mu.Lock()
				batch := s.queue
				s.queue = nil
				if len(batch) == 0 {
					s.running = false
					s.mu.Unlock()
					return
				}
				s.mu.Unlock()
				for _, f := range batch {
					f()
				}
			}
		})
	}
}

// notifyCtx is the context a notification for cl is sent with: its
// request's when one is in flight (an HTTP session gets it on that
// request's stream), else none.
func notifyCtx(c *call, cl *client) context.Context {
	if c != nil && c.cl == cl {
		return c.ctx
	}
	return nil
}

// sendTo sends a notification with the values of a request's context but
// not its end (a queued message outlives the request); when the request's
// stream is gone, it goes on the session's own.
func sendTo(ctx context.Context, send func(context.Context) error) {
	if ctx == nil {
		_ = send(context.Background())
		return
	}
	if send(context.WithoutCancel(ctx)) != nil {
		_ = send(context.Background())
	}
}
