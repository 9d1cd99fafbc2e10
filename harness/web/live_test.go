package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/live"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/view"
	"github.com/arenabots/arena/rules/codeclash"
)

// sse is a server-sent event as a client reads it.
type sse struct{ id, event, data string }

// stream opens path as token's holder (Last-Event-ID last, unless "") and
// sends each event it reads on the channel, closed when the stream ends.
func (e *testEvent) stream(t *testing.T, ctx context.Context, path, token, last string) <-chan sse {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	out := make(chan sse, 100)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" {
					out <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return out
}

// next is the stream's next event, or the end of the stream (ok false),
// within 10 s.
func next(t *testing.T, c <-chan sse) (sse, bool) {
	t.Helper()
	select {
	case ev, ok := <-c:
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return sse{}, false
}

// feed plays a game on e's hub by hand: the start, then turns added with
// add(ply), White on odd plies, each with its side's own stderr.
func feed(t *testing.T, e *testEvent, kind string, white, black int64) (g *live.Game, add func(ply int)) {
	t.Helper()
	st, err := codeclash.Game{}.New(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	g = e.server.Watch(kind, event.Side{Team: white, Name: "w-bot"}, event.Side{Team: black, Name: "b-bot"}, 1, 0).(*live.Game)
	g.Started(transcript.Header{Game: "codeclash", Seed: 9, White: transcript.Bot{Name: "w-bot"}, Black: transcript.Bot{Name: "b-bot"}}, st)
	return g, func(ply int) {
		side := "white"
		if ply%2 == 0 {
			side = "black"
		}
		g.Turn(transcript.Turn{Ply: ply, Side: side, Verdict: "ok", StderrTail: "secret of " + side}, st)
	}
}

// TestALiveGameStreamsEachAskerWhatItMaySee: a visitor, each side's team
// and the organizer follow a ladder game: each step once, in order, the
// sides' stderr to their own team and the organizer only; a stream cut and
// resumed with Last-Event-ID misses nothing and repeats nothing; the game's
// end ends every stream with the result.
func TestALiveGameStreamsEachAskerWhatItMaySee(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, add := feed(t, e, event.LadderGame, e.a.ID, e.b.ID)
	add(1)
	path := "/live/" + g.ID + "/events"
	askers := []struct {
		who          string
		token        string
		white, black bool
	}{{"a visitor", "", false, false}, {"Alpha (white)", e.a.Token, true, false}, {"Beta (black)", e.b.Token, false, true}, {"the organizer", e.admin, true, true}}
	streams := make([]<-chan sse, len(askers))
	for i, a := range askers {
		streams[i] = e.stream(t, ctx, path, a.token, "")
	}
	// A visitor whose stream is cut after step 2 comes back.
	cut, cutCancel := context.WithCancel(ctx)
	resumed := e.stream(t, cut, path, "", "")
	if playing, following := e.server.Live.Counts(); playing[event.LadderGame] != 1 || following != len(askers)+1 {
		t.Errorf("the hub counts %v playing and %d streams, want a ladder game and %d", playing, following, len(askers)+1)
	}
	for ply := 2; ply <= 6; ply++ {
		add(ply)
	}
	g.Finished(transcript.Result{Winner: transcript.WinnerBlack, Reason: "king captured"})
	var got []int
	for {
		ev, ok := next(t, resumed)
		if !ok || ev.event != "step" {
			t.Fatalf("the stream to cut: %+v %v", ev, ok)
		}
		n := 0
		fmt.Sscan(ev.id, &n)
		got = append(got, n)
		if n == 2 {
			break
		}
	}
	cutCancel()
	resumed = e.stream(t, ctx, path, "", "2")
	for {
		ev, ok := next(t, resumed)
		if !ok {
			break
		}
		if ev.event == "step" {
			n := 0
			fmt.Sscan(ev.id, &n)
			got = append(got, n)
		}
	}
	if fmt.Sprint(got) != "[0 1 2 3 4 5 6]" {
		t.Errorf("a visitor cut after step 2 and resumed read steps %v, want each of 0..6 once, in order", got)
	}

	for i, a := range askers {
		var steps []view.Step
		var end *transcript.Result
		for {
			ev, ok := next(t, streams[i])
			if !ok {
				break
			}
			switch ev.event {
			case "step":
				var s view.Step
				if err := json.Unmarshal([]byte(ev.data), &s); err != nil {
					t.Fatal(err)
				}
				if ev.id != fmt.Sprint(len(steps)) {
					t.Errorf("%s: step %d came with id %s", a.who, len(steps), ev.id)
				}
				steps = append(steps, s)
			case "end":
				var r transcript.Result
				if err := json.Unmarshal([]byte(ev.data), &r); err != nil {
					t.Fatal(err)
				}
				end = &r
			}
		}
		if len(steps) != 7 || end == nil || end.Winner != transcript.WinnerBlack {
			t.Errorf("%s read %d steps and the end %+v, want 7 and Black's win", a.who, len(steps), end)
			continue
		}
		for _, s := range steps[1:] {
			mine := s.Side == "white" && a.white || s.Side == "black" && a.black
			if shown := s.StderrTail == "secret of "+s.Side; shown != mine || !shown && s.StderrTail != view.Hidden {
				t.Errorf("%s, ply %d (%s's): stderr %q", a.who, s.Ply, s.Side, s.StderrTail)
			}
		}
	}
	// The page of the game, ended: its steps as the asker may see them.
	if res, body := e.do(t, http.MethodGet, "/live/"+g.ID, "", nil, ""); res.StatusCode != http.StatusOK ||
		strings.Contains(body, "secret of") || !strings.Contains(body, "king captured") {
		t.Errorf("a visitor's page of the ended game: %d, secrets shown %v, result shown %v", res.StatusCode,
			strings.Contains(body, "secret of"), strings.Contains(body, "king captured"))
	}
	if res, body := e.do(t, http.MethodGet, "/live/"+g.ID, e.a.Token, nil, ""); res.StatusCode != http.StatusOK ||
		!strings.Contains(body, "secret of white") || strings.Contains(body, "secret of black") {
		t.Errorf("Alpha's page of the game: %d, its own shown %v, Beta's shown %v", res.StatusCode,
			strings.Contains(body, "secret of white"), strings.Contains(body, "secret of black"))
	}
}

// TestWhoMayWatchWhichLiveGame: a scrimmage is its teams' and the
// organizer's; the final's games are everyone's until the scoreboard
// freezes, then the organizer's only (a stream under way ends at the
// freeze), and everyone's again at the reveal; a stream ends when its
// asker's token is replaced.
func TestWhoMayWatchWhichLiveGame(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := e.store.AddTeam(ctx, "Gamma", "", "")
	if err != nil {
		t.Fatal(err)
	}
	scrim, _ := feed(t, e, event.ScrimmageGame, e.a.ID, e.b.ID)
	for _, c := range []struct {
		who   string
		token string
		want  int
	}{{"a visitor", "", http.StatusNotFound}, {"Gamma", c.Token, http.StatusNotFound}, {"Alpha", e.a.Token, http.StatusOK}, {"the organizer", e.admin, http.StatusOK}} {
		if res, _ := e.do(t, http.MethodGet, "/live/"+scrim.ID, c.token, nil, ""); res.StatusCode != c.want {
			t.Errorf("%s asks for a scrimmage's live page: %d, want %d", c.who, res.StatusCode, c.want)
		}
	}
	if _, body := e.do(t, http.MethodGet, "/playing", c.Token, nil, ""); strings.Contains(body, scrim.ID) {
		t.Error("Gamma's list of games playing shows another pair's scrimmage")
	}
	if _, body := e.do(t, http.MethodGet, "/playing", e.b.Token, nil, ""); !strings.Contains(body, scrim.ID) {
		t.Error("Beta's list of games playing does not show its scrimmage")
	}

	final, add := feed(t, e, event.FinalGame, e.a.ID, e.b.ID)
	if _, body := e.do(t, http.MethodGet, "/playing", "", nil, ""); !strings.Contains(body, final.ID) || strings.Contains(body, scrim.ID) {
		t.Errorf("a visitor's list of games playing: %s", body)
	}
	visitor := e.stream(t, ctx, "/live/"+final.ID+"/events", "", "")
	if ev, ok := next(t, visitor); !ok || ev.event != "step" {
		t.Fatalf("a visitor's stream of the final's game: %+v %v", ev, ok)
	}
	team := e.stream(t, ctx, "/live/"+scrim.ID+"/events", e.a.Token, "")
	if ev, ok := next(t, team); !ok || ev.event != "step" {
		t.Fatalf("Alpha's stream of its scrimmage: %+v %v", ev, ok)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/freeze", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("freeze: %d %s", res.StatusCode, body)
	}
	add(1)
	if ev, ok := next(t, visitor); !ok || ev.event != "gone" || !strings.Contains(ev.data, "frozen") {
		t.Errorf("the scoreboard froze: a visitor's stream of the final's game sent %+v (%v), want that it is gone, frozen", ev, ok)
	}
	if ev, ok := next(t, visitor); ok {
		t.Errorf("the scoreboard froze, and a visitor's stream of the final's game went on: %+v", ev)
	}
	if res, _ := e.do(t, http.MethodGet, "/live/"+final.ID, "", nil, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("a frozen final's game's page for a visitor: %d, want 404", res.StatusCode)
	}
	if _, body := e.do(t, http.MethodGet, "/playing", e.a.Token, nil, ""); strings.Contains(body, final.ID) {
		t.Error("a frozen final's game is listed as playing for a team")
	}
	if _, body := e.do(t, http.MethodGet, "/final/live/events", "", nil, ""); !strings.Contains(body, `"frozen":true`) || strings.Contains(body, final.ID) {
		t.Errorf("the projector's boards while frozen: %s", body)
	}
	if _, body := e.do(t, http.MethodGet, "/final/live/events", e.admin, nil, ""); !strings.Contains(body, final.ID) {
		t.Errorf("the organizer's projector while frozen does not show the game: %s", body)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/reveal", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("reveal: %d %s", res.StatusCode, body)
	}
	if _, body := e.do(t, http.MethodGet, "/final/live/events", "", nil, ""); !strings.Contains(body, final.ID) {
		t.Errorf("the projector's boards once revealed: %s", body)
	}

	// Alpha replaces its token: the old one's stream ends at the next turn.
	if res, body := e.do(t, http.MethodPost, "/api/v1/token", e.a.Token, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("new token: %d %s", res.StatusCode, body)
	}
	scrim.Turn(transcript.Turn{Ply: 1, Side: "white", Verdict: "ok"}, nil)
	for {
		ev, ok := next(t, team)
		if !ok {
			break
		}
		if ev.id == "1" {
			t.Error("a stream went on after its asker's token was replaced")
		}
		if ev.event == "gone" && !strings.Contains(ev.data, "session ended") {
			t.Errorf("the stream ended saying %s", ev.data)
		}
	}
}
