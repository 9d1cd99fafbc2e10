package web

import (
	"bytes"
	"net/http"
	"runtime"
	"strconv"
	"unsafe"
)

// turns answers requests in the order they came, a few at a time. Under a
// burst (a thousand teams opening their pages within a second) each
// request waits its turn in line instead of all of them sharing the CPU
// and the database's connections at once, where whichever is picked by
// chance goes first and some wait many times as long as the rest.
//
// An answer is made in memory while its turn lasts and sent after it, so
// a client that reads slowly, or not at all, holds no turn; a client gone
// while it waited takes none.
type turns struct {
	slots chan struct{}
}

// answerSlots is how many requests are answered at once: one a CPU, and
// one more for an answer that waits on the disk.
func answerSlots() int { return max(2, runtime.GOMAXPROCS(0)) + 1 }

func newTurns(n int) *turns { return &turns{slots: make(chan struct{}, n)} }

// serve answers r with h in its turn. A channel's waiting senders are
// woken in the order they came: that order is the line's.
func (t *turns) serve(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	select {
	case t.slots <- struct{}{}:
	case <-r.Context().Done():
		return // the client left: nobody to answer
	}
	held := &heldAnswer{header: w.Header()}
	func() {
		defer func() { <-t.slots }()
		h(held, r)
	}()
	held.send(w)
}

// heldAnswer is an answer kept in memory until it is sent: its status and
// body (its header is the real answer's). A page kept whole is held as
// the string it is kept in, not copied: it is most of what is sent.
type heldAnswer struct {
	header http.Header
	status int
	// kept is the answer's first text, when it was written as a string of
	// keptAtLeast bytes or more; body is what was written after it.
	kept string
	body bytes.Buffer
}

// keptAtLeast is the size from which a text written first is held as it
// is: smaller ones cost less to copy than to write apart.
const keptAtLeast = 4 << 10

func (a *heldAnswer) Header() http.Header { return a.header }

func (a *heldAnswer) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

func (a *heldAnswer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.body.Write(p)
}

func (a *heldAnswer) WriteString(s string) (int, error) {
	a.WriteHeader(http.StatusOK)
	if a.kept == "" && a.body.Len() == 0 && len(s) >= keptAtLeast {
		a.kept = s
		return len(s), nil
	}
	return a.body.WriteString(s)
}

// send writes the answer to w, its length stated.
func (a *heldAnswer) send(w http.ResponseWriter) {
	a.WriteHeader(http.StatusOK)
	if n := len(a.kept) + a.body.Len(); n > 0 && a.header.Get("Content-Length") == "" {
		a.header.Set("Content-Length", strconv.Itoa(n))
	}
	w.WriteHeader(a.status)
	// The client is gone if these fail.
	if a.kept != "" {
		// As one write, as the body's: a string written to the
		// connection's buffer would go out 4 KB a write. Write never
		// changes what it is given (io.Writer).
		_, _ = w.Write(unsafe.Slice(unsafe.StringData(a.kept), len(a.kept)))
	}
	_, _ = w.Write(a.body.Bytes())
}
