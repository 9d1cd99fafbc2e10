package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// staleImage is a worker's backend that runs another runtime image than the
// coordinator's.
type staleImage struct{ sandbox.Backend }

func (s staleImage) Describe(ctx context.Context) (map[string]string, error) {
	d, err := s.Backend.Describe(ctx)
	d["imageId"] = "sha256:stale"
	return d, err
}

// A worker's result counts only if its transcript is the game it was sent:
// an enrolled worker that plays another game, consistent in itself and
// signed with its own key, is refused with the field that differs.
func TestAResultMustBeTheGameItWasSent(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "garbage")}
	o := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
	o.Config.Rules = map[string]string{"maxPlies": "16"}
	o.Config.Bots = o.Config.Bots[:2]
	o.Bots = o.Bots[:2]
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	o.WorkerKey = func(string) (string, error) { return transcript.PublicKeyHex(key), nil }
	facts := Facts{Game: "codeclash", Sandbox: "local"}

	// The game the coordinator published: game 3, first attempt.
	g := tournament.Record{Game: tournament.Game{ID: 3, White: 0, Black: 1, Seed: 11}}
	want := o.MatchConfig(g, "t1", "")
	stored := map[string]*submission.Bot{"legal": bots[0], "shuffle": bots[1], "older": bots[2]}
	honest := specOf(want, "legal", "shuffle")
	job := distrib.Job{Tournament: "t1", Game: want.Job.Game, Attempt: want.Job.Attempt}

	// play is a worker playing sp as the job j on backend b.
	play := func(t *testing.T, sp spec, j distrib.Job, b sandbox.Backend) []byte {
		t.Helper()
		w := &Worker{Backend: b, Scratch: t.TempDir(), Signer: key, bots: stored}
		data, err := json.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		j.Spec = data
		archive, err := w.Play(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		return archive
	}
	judge := func(t *testing.T, archive []byte) (transcript.Result, string) {
		t.Helper()
		res, refused, lie, err := o.received(t.TempDir()+"/game", want, facts, distrib.Result{Game: 3, Attempt: 1, Worker: "w1"}, bytes.NewReader(archive))
		if err != nil {
			t.Fatal(err)
		}
		// A refusal of what a result claims is a lie: its worker is to be
		// suspended.
		if lie != (refused != "") {
			t.Fatalf("refused %q, lie %v", refused, lie)
		}
		return res, refused
	}
	localBackend := func() sandbox.Backend { return &local.Backend{Dir: t.TempDir()} }

	if res, refused := judge(t, play(t, honest, job, localBackend())); refused != "" || res.Plies == 0 {
		t.Fatalf("the honest result is refused: %q (%+v)", refused, res)
	}

	alter := func(f func(*spec)) spec {
		sp := honest
		sp.Rules = map[string]string{"maxPlies": "16"}
		f(&sp)
		return sp
	}
	earlier := job
	earlier.Game = 1 // an earlier game of the same pair, the same seed
	retried := job
	retried.Attempt = 2
	other := job
	other.Tournament = "t0"
	cases := []struct {
		name  string
		sp    spec
		job   distrib.Job
		stale bool
		field string
	}{
		{"an earlier game's honest transcript", honest, earlier, false, "job"},
		{"another attempt", honest, retried, false, "job"},
		{"another tournament", honest, other, false, "job"},
		{"the sides swapped", alter(func(s *spec) { s.White, s.Black = s.Black, s.White }), job, false, "white"},
		{"an older submission for black", alter(func(s *spec) { s.Black = "older" }), job, false, "black"},
		{"another seed", alter(func(s *spec) { s.Seed++ }), job, false, "seed"},
		{"another rule option", alter(func(s *spec) { s.Rules["maxPlies"] = "18" }), job, false, "rules"},
		{"a longer turn limit", alter(func(s *spec) { s.Limits.TurnTimeout += time.Second }), job, false, "limits"},
		{"more memory", alter(func(s *spec) { s.Limits.Memory *= 2 }), job, false, "limits"},
		{"another fault policy", alter(func(s *spec) { s.OnFault = "random-move" }), job, false, "onFault"},
		{"another evidence policy", alter(func(s *spec) { s.Evidence.Keep = transcript.KeepFinal }), job, false, "evidence"},
		{"another arena", alter(func(s *spec) { s.ArenaVersion = "v0-old" }), job, false, "arenaVersion"},
		{"another runtime image", honest, job, true, "sandbox.imageId"},
	}
	// The time control follows from the rules: a transcript whose clock is
	// not its rules' does not replay (replay's own tests), so it is refused
	// before the job is compared.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := localBackend()
			if c.stale {
				b = staleImage{b}
			}
			_, refused := judge(t, play(t, c.sp, c.job, b))
			if wantMsg := fmt.Sprintf("it is not the game it was sent: %s differs", c.field); !strings.Contains(refused, wantMsg) {
				t.Fatalf("refused %q, want it to say %q", refused, wantMsg)
			}
		})
	}
}
