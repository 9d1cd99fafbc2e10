package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/arenabots/arena/harness/event"
)

// Requests to read are answered in the order they came, however many
// wait: none is left behind by chance.
func TestReadsAreAnsweredInTheOrderTheyCame(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		tn := newTurns(1)
		release := make(chan struct{})
		var mu sync.Mutex
		var order []string
		serve := func(name string) {
			tn.serve(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), func(http.ResponseWriter, *http.Request) {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				if name == "first" {
					<-release
				}
			})
		}
		go serve("first")
		synctest.Wait() // first holds the one turn
		names := []string{"b", "c", "d", "e", "f", "g", "h"}
		for _, name := range names {
			go serve(name)
			synctest.Wait() // name waits in line
		}
		mu.Lock()
		if len(order) != 1 {
			t.Errorf("answered while the one turn was held: %v", order)
		}
		mu.Unlock()
		close(release)
		synctest.Wait()
		if want := append([]string{"first"}, names...); !slices.Equal(order, want) {
			t.Errorf("answered in the order %v, want %v", order, want)
		}
	})
}

// stalled is a client that takes no byte of its answer.
type stalled struct {
	header         http.Header
	wrote, release chan struct{}
}

func (s *stalled) Header() http.Header { return s.header }
func (s *stalled) WriteHeader(int)     {}
func (s *stalled) Write(p []byte) (int, error) {
	close(s.wrote)
	<-s.release // not taken until the test ends
	return len(p), nil
}

// An answer is sent as it was written, piece by piece in order and its
// length stated, whether a page kept whole is held as it is (written
// first, and large) or copied.
func TestAnAnswerIsSentAsItWasWritten(t *testing.T) {
	t.Parallel()
	big, other := strings.Repeat("a", keptAtLeast), strings.Repeat("c", keptAtLeast+1)
	for _, pieces := range [][]string{
		{big, "b", other},
		{"b", big, other},
		{big},
		{"", big, ""},
		{"small"},
		{},
	} {
		rec := httptest.NewRecorder()
		newTurns(1).serve(rec, httptest.NewRequest(http.MethodGet, "/", nil), func(w http.ResponseWriter, _ *http.Request) {
			for i, p := range pieces {
				if i%2 == 1 {
					w.Write([]byte(p))
				} else {
					w.(interface{ WriteString(string) (int, error) }).WriteString(p)
				}
			}
		})
		want := strings.Join(pieces, "")
		if got := rec.Body.String(); got != want {
			t.Errorf("pieces of %v bytes: sent %d bytes %.20q..., want %d", lens(pieces), len(got), got, len(want))
		}
		if n := rec.Header().Get("Content-Length"); want != "" && n != fmt.Sprint(len(want)) {
			t.Errorf("pieces of %v bytes: Content-Length %s, want %d", lens(pieces), n, len(want))
		}
	}
}

func lens(s []string) []int {
	var n []int
	for _, p := range s {
		n = append(n, len(p))
	}
	return n
}

// A client that reads its answer slowly, or never, holds no turn: its
// answer is made in its turn and sent after it. A client that left while
// it waited takes none.
func TestASlowClientHoldsNoTurn(t *testing.T) {
	t.Parallel()
	tn := newTurns(1)
	slow := &stalled{header: http.Header{}, wrote: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(slow.release) })
	go tn.serve(slow, httptest.NewRequest(http.MethodGet, "/", nil), func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(strings.Repeat("a page ", 10000)))
	})
	<-slow.wrote // the answer is being sent, to no one reading

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	select {
	case tn.slots <- struct{}{}: // the one turn taken, so the request gone must wait
	case <-time.After(10 * time.Second):
		t.Fatal("a client that reads nothing holds the only turn")
	}
	tn.serve(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil).WithContext(gone), func(http.ResponseWriter, *http.Request) {
		t.Error("a request whose client left was answered")
	})
	<-tn.slots

	done := make(chan *httptest.ResponseRecorder)
	go func() {
		w := httptest.NewRecorder()
		tn.serve(w, httptest.NewRequest(http.MethodGet, "/", nil), func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Next", "yes")
			w.WriteHeader(http.StatusTeapot)
			w.Write([]byte("next"))
		})
		done <- w
	}()
	select {
	case w := <-done:
		if w.Code != http.StatusTeapot || w.Body.String() != "next" || w.Header().Get("X-Next") != "yes" || w.Header().Get("Content-Length") != "4" {
			t.Errorf("the next answer: %d %q %v", w.Code, w.Body, w.Header())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a client that reads nothing holds the only turn")
	}
}

// Every read of the server waits its turn but its direct routes: with
// every turn taken, a page waits, and the standings' stream and the
// site's style sheet still answer.
func TestStreamsWaitNoTurn(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	e.server.turns = newTurns(1)
	e.server.turns.slots <- struct{}{} // every turn taken
	// answered says whether path answers within d.
	answered := func(path string, d time.Duration) (*http.Response, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.http.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, false
		}
		res.Body.Close()
		return res, true
	}
	if res, ok := answered("/standings/events", 10*time.Second); !ok || res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("the standings' stream waits for a turn")
	}
	if res, ok := answered("/static/style.css", 10*time.Second); !ok || res.StatusCode != http.StatusOK {
		t.Errorf("the style sheet waits for a turn")
	}
	if res, ok := answered("/", 300*time.Millisecond); ok {
		t.Fatalf("the home page was answered with every turn taken: %d", res.StatusCode)
	}
	<-e.server.turns.slots
	if res, body := e.do(t, http.MethodGet, "/", "", nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, "</html>") {
		t.Errorf("the home page once a turn is free: %d", res.StatusCode)
	}
}

// A view (a GET answered in its turn) reads one snapshot of the event: a
// team added between two of its reads is not seen by the second. A form
// posted, and a direct route (a stream, a download), read the event as it
// is at each read.
func TestAViewReadsOneSnapshot(t *testing.T) {
	e := newTestEvent(t, "")
	for i, c := range []struct {
		rt       Route
		snapshot bool
	}{
		{Route{Pattern: "GET /probe", Access: Public}, true},
		{Route{Pattern: "POST /probe", Access: Public}, false},
		{Route{Pattern: "GET /probe", Access: Public, Direct: true}, false},
	} {
		var first, second int
		c.rt.handle = func(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
			count := func() int {
				teams, err := e.store.Teams(r.Context())
				if err != nil {
					t.Fatal(err)
				}
				return len(teams)
			}
			first = count()
			if _, err := e.store.AddTeam(context.Background(), fmt.Sprintf("Added %d", i), "", ""); err != nil {
				t.Fatal(err)
			}
			second = count()
			return nil
		}
		method, _, _ := strings.Cut(c.rt.Pattern, " ")
		rec := httptest.NewRecorder()
		e.server.guard(c.rt).ServeHTTP(rec, httptest.NewRequest(method, "/probe", nil))
		if rec.Code != http.StatusOK && rec.Code != 0 {
			t.Errorf("%s (direct: %v): status %d", c.rt.Pattern, c.rt.Direct, rec.Code)
		}
		if seen := second != first; seen == c.snapshot {
			t.Errorf("%s (direct: %v): %d teams, then %d after one was added: want a snapshot %v", c.rt.Pattern, c.rt.Direct, first, second, c.snapshot)
		}
	}
}
