package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
)

// TestADisputeIsFiledRerunAndAnswered: team A disputes one of its games
// over the API; the dispute carries the replay's verdict and a proposed
// turn; B sees none of it; the organizer's page lists it, the organizer runs
// the turn again on the server's sandbox (the rerun reproduces the record)
// and answers; A's game page shows the answer and the rerun. Bad messages
// and a sixth open dispute are refused with their reasons.
func TestADisputeIsFiledRerunAndAnswered(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A's submission is the very executable that plays white.
	sub := passedUpload(t, e, e.a.ID, "./examples/random")
	greedy, err := submission.Load(gobuild.MustStatic(t, "./examples/greedy"), submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	playsFinals(t, ctx, e, greedy)
	game := playGame(t, e, event.Side{Team: e.a.ID, Submission: sub.ID}, event.ValidationGame)
	path := fmt.Sprintf("/api/v1/games/%d/disputes", game.ID)

	for _, bad := range []struct{ body, code string }{{`{"message": "   "}`, "refused"}, {`{"message": "` + strings.Repeat("x", event.MaxDisputeMessage+1) + `"}`, "refused"}, {`[1]`, "bad_request"}} {
		if res, out := e.do(t, http.MethodPost, path, e.a.Token, strings.NewReader(bad.body), "application/json"); res.StatusCode < 400 || !strings.Contains(out, bad.code) {
			t.Errorf("dispute %.40s: %d %s, want %s", bad.body, res.StatusCode, out, bad.code)
		}
	}
	res, out := e.do(t, http.MethodPost, path, e.a.Token, strings.NewReader(`{"message": "my bot <b>timed out</b> at the end, it never does"}`), "application/json")
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("file a dispute: %d %s", res.StatusCode, out)
	}
	var filed struct{ Dispute event.Dispute }
	if err := json.Unmarshal([]byte(out), &filed); err != nil {
		t.Fatal(err)
	}
	d := filed.Dispute
	if d.State != event.DisputeOpen || !strings.HasPrefix(d.Verdict, "consistent") || d.RerunPly < 1 || d.Team != e.a.ID {
		t.Fatalf("the dispute filed: %+v", d)
	}
	// The turn proposed is the disputing team's own (it played white).
	lines, err := transcript.ReadFile(filepath.Join(e.store.MatchDir(game), transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		var turn transcript.Turn
		if l.Type == transcript.TypeTurn && l.Decode(&turn) == nil && turn.Ply == d.RerunPly && turn.Side != transcript.WinnerWhite {
			t.Errorf("the dispute proposes turn %d, %s's, not the disputing team's", d.RerunPly, turn.Side)
		}
	}
	if res, out := e.do(t, http.MethodGet, "/api/v1/disputes", e.b.Token, nil, ""); res.StatusCode != http.StatusOK || strings.Contains(out, "timed out") {
		t.Errorf("team B's disputes: %d %s, want none of A's", res.StatusCode, out)
	}
	if res, out := e.do(t, http.MethodGet, "/admin", e.admin, nil, ""); !strings.Contains(out, "my bot &lt;b&gt;timed out&lt;/b&gt;") || !strings.Contains(out, fmt.Sprintf(`id="dispute-%d"`, d.ID)) {
		t.Errorf("the organizer's page does not list the dispute, escaped: %d", res.StatusCode)
	} else if !strings.Contains(out, "Every game plays on this machine.") {
		t.Errorf("the organizer's page does not say where games play:\n%s", out)
	}

	// The organizer runs the turn again and answers.
	res, out = e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/disputes/%d/rerun", d.ID), e.admin, strings.NewReader(fmt.Sprintf(`{"ply": %d}`, d.RerunPly)), "application/json")
	if res.StatusCode != http.StatusOK || !strings.Contains(out, "2 of 2 runs reproduce the recorded move and verdict") {
		t.Fatalf("rerun: %d %s", res.StatusCode, out)
	}
	saved, err := os.ReadFile(fmt.Sprintf("%s/%s/%d/rerun-%d.txt", e.dir, event.DisputesDir, d.ID, d.RerunPly))
	if err != nil || !strings.Contains(string(saved), "reproduce") {
		t.Errorf("the rerun is not kept in the event directory: %v %q", err, saved)
	}
	// And another turn of the same side: both reruns are kept.
	other := d.RerunPly - 2
	if other < 1 {
		other = d.RerunPly + 2
	}
	res, out = e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/disputes/%d/rerun", d.ID), e.admin, strings.NewReader(fmt.Sprintf(`{"ply": %d}`, other)), "application/json")
	var twice struct{ Dispute event.Dispute }
	if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(out), &twice) != nil || len(twice.Dispute.Reruns) != 2 ||
		twice.Dispute.Reruns[0].Ply != d.RerunPly || twice.Dispute.Reruns[1].Ply != other || !strings.Contains(twice.Dispute.Reruns[0].Text, "reproduce") {
		t.Fatalf("a second rerun: %d %s", res.StatusCode, out)
	}
	if res, out := e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/disputes/%d/rerun", d.ID), e.admin, strings.NewReader(`{"ply": 100000}`), "application/json"); res.StatusCode != http.StatusConflict || !strings.Contains(out, "not in the transcript") {
		t.Errorf("a turn the game does not have: %d %s", res.StatusCode, out)
	}
	res, out = e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/disputes/%d/answer", d.ID), e.admin, strings.NewReader(`{"answer": "The turn ran again within its time twice: the result stands."}`), "application/json")
	if res.StatusCode != http.StatusOK || !strings.Contains(out, `"state": "answered"`) {
		t.Fatalf("answer: %d %s", res.StatusCode, out)
	}
	res, out = e.do(t, http.MethodGet, fmt.Sprintf("/games/%d", game.ID), e.a.Token, nil, "")
	if res.StatusCode != http.StatusOK || !strings.Contains(out, "the result stands") || !strings.Contains(out, "runs reproduce") {
		t.Errorf("A's game page does not show the answer and the rerun: %d", res.StatusCode)
	}
	// The viewer opens at the turn last run again.
	if !strings.Contains(out, fmt.Sprintf(`src="/games/%d/view#ply=%d"`, game.ID, other)) {
		t.Errorf("A's game page does not open its viewer at turn %d", other)
	}
	for _, ply := range []int{d.RerunPly, other} {
		if !strings.Contains(out, fmt.Sprintf("Turn %d run again", ply)) {
			t.Errorf("A's game page does not show the rerun of turn %d", ply)
		}
	}

	// At most MaxOpenDisputes open at once.
	for i := range event.MaxOpenDisputes + 1 {
		res, out := e.do(t, http.MethodPost, path, e.a.Token, strings.NewReader(fmt.Sprintf(`{"message": "again %d"}`, i)), "application/json")
		want := http.StatusCreated
		if i == event.MaxOpenDisputes {
			want = http.StatusTooManyRequests
		}
		if res.StatusCode != want {
			t.Errorf("open dispute %d: %d %s, want %d", i+1, res.StatusCode, out, want)
		}
	}
}
