package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/rules/tiles"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// forge edits a packed match directory as a careful forger would: the
// footer's and result.json's winner changed, the hash chain recomputed.
func forge(t *testing.T, archive []byte) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	swap := strings.NewReplacer(`"winner":"white"`, `"winner":"black"`, `"winner":"black"`, `"winner":"white"`, `"winner":"draw"`, `"winner":"white"`,
		`"winner": "white"`, `"winner": "black"`, `"winner": "black"`, `"winner": "white"`, `"winner": "draw"`, `"winner": "white"`)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		switch h.Name {
		case transcript.FileName:
			lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
			lines[len(lines)-1] = swap.Replace(lines[len(lines)-1])
			prev, fixed := "", []string{}
			for _, l := range lines {
				var m map[string]json.RawMessage
				json.Unmarshal([]byte(strings.TrimSpace(l)), &m)
				old, _ := json.Marshal(m["prev"])
				l = strings.Replace(strings.TrimSpace(l), `"prev":`+string(old), `"prev":"`+prev+`"`, 1)
				fixed = append(fixed, l+"\n")
				prev = transcript.Hash([]byte(l))
			}
			data = []byte(strings.Join(fixed, ""))
		case "result.json":
			data = []byte(swap.Replace(string(data)))
		}
		h.Size = int64(len(data))
		tw.WriteHeader(h)
		tw.Write(data)
	}
	tw.Close()
	return out.Bytes()
}

// editResultFile changes only a packed match directory's result.json: its
// winner is the other side, its transcript left as played and signed.
func editResultFile(t *testing.T, archive []byte) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == transcript.ResultFile {
			var r transcript.Result
			if err := json.Unmarshal(data, &r); err != nil {
				t.Fatal(err)
			}
			r.Winner = map[string]string{transcript.WinnerWhite: transcript.WinnerBlack}[r.Winner]
			if r.Winner == "" {
				r.Winner = transcript.WinnerWhite
			}
			if data, err = transcript.EncodeResult(r); err != nil {
				t.Fatal(err)
			}
		}
		h.Size = int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// Games spread over workers give the standings a run on one machine gives:
// a worker that dies mid-game loses nothing, and a forged result (a winner
// edited, the chain recomputed), one signed by another key, another game
// (the sides swapped), an archive that does not read, one that is not
// there and an honest game whose result.json alone was edited are
// rejected, each worker suspended with the reason, and the game played
// again without spending its attempts: no result a worker sends stops the
// run.
func TestWorkersPlayTheTournamentALocalRunPlays(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	localDir := t.TempDir()
	lo := options(t, localDir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	lo.Config.Rules = map[string]string{"maxPlies": "20"}
	lo.Config.Playoff = nil // first place level after every tie-break is played for, remotely as locally
	want, err := Run(context.Background(), lo)
	if err != nil {
		t.Fatal(err)
	}

	c := distribtest.Start(t, "remote-test", 2*time.Second, "w1", "w2", "dies", "forger", "impostor", "swapper", "garbler", "loser", "teller")
	coordinator := c.Coordinator(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := func(play distrib.Player, q *distrib.Queue) {
		w := &distrib.Worker{Queue: q, Slots: 1, Play: play, Machine: json.RawMessage(`{"host":"test","cpus":1,"sandbox":"local"}`)}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}
	worker := func(name string) (*Worker, *distrib.Queue, *nats.Conn) { return joined(t, c, name) }
	// The misbehaving workers each take a game before the honest ones
	// join: however loaded the host, each misbehaves once.
	took := make(chan string, 9)
	first := func(name string, play distrib.Player) distrib.Player {
		var once sync.Once
		return func(ctx context.Context, j distrib.Job) ([]byte, error) {
			once.Do(func() { took <- name })
			return play(ctx, j)
		}
	}
	// One worker dies in its first game; another forges its first result;
	// a third plays honestly but signs with a key it was not enrolled with.
	_, dq, dconn := worker("dies")
	start(first("dies", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		dconn.Close()
		<-ctx.Done()
		return nil, ctx.Err()
	}), dq)
	forger, fq, fconn := worker("forger")
	var once sync.Once
	start(first("forger", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		forged := false
		once.Do(func() { forged = true })
		if !forged {
			// One forgery, then it leaves: the game it holds goes back.
			fconn.Close()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		archive, err := forger.Play(ctx, j)
		if err != nil {
			return nil, err
		}
		return forge(t, archive), nil
	}), fq)
	impostor, iq, iconn := worker("impostor")
	_, impostor.Signer, _ = ed25519.GenerateKey(nil)
	var ionce sync.Once
	start(first("impostor", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		first := false
		ionce.Do(func() { first = true })
		if !first {
			iconn.Close()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return impostor.Play(ctx, j)
	}), iq)

	// A fourth plays its first game honestly but with the sides swapped:
	// consistent, signed by its own key, and another game.
	swapper, sq, sconn := worker("swapper")
	var sonce sync.Once
	start(first("swapper", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		first := false
		sonce.Do(func() { first = true })
		if !first {
			sconn.Close()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		var sp spec
		if err := json.Unmarshal(j.Spec, &sp); err != nil {
			return nil, err
		}
		sp.White, sp.Black = sp.Black, sp.White
		data, err := json.Marshal(sp)
		if err != nil {
			return nil, err
		}
		j.Spec = data
		return swapper.Play(ctx, j)
	}), sq)

	// A fifth hands in an archive that is not one; a sixth a result whose
	// archive is not in its bucket.
	_, gq, gconn := worker("garbler")
	var gonce sync.Once
	start(first("garbler", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		first := false
		gonce.Do(func() { first = true })
		if !first {
			gconn.Close()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return []byte("not a tar archive"), nil
	}), gq)
	_, lq, lconn := worker("loser")
	start(first("loser", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		res, _ := json.Marshal(distrib.Result{Tournament: j.Tournament, Game: j.Game, Attempt: j.Attempt, Worker: "loser", Handout: j.Handout, Object: "result-" + j.Handout})
		lconn.Publish("arena."+j.Tournament+".results.loser", res)
		lconn.Flush()
		<-ctx.Done() // the game itself is never handed back: its ack wait does
		return nil, ctx.Err()
	}), lq)

	// A seventh plays honestly and edits only result.json to name the
	// other winner: its transcript, signed and consistent, says otherwise.
	teller, tq, tconn := worker("teller")
	var tonce sync.Once
	start(first("teller", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		first := false
		tonce.Do(func() { first = true })
		if !first {
			tconn.Close()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		archive, err := teller.Play(ctx, j)
		if err != nil {
			return nil, err
		}
		return editResultFile(t, archive), nil
	}), tq)

	remoteDir := t.TempDir()
	ro := options(t, remoteDir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules, ro.Config.Playoff = lo.Config.Rules, lo.Config.Playoff
	remoteOn(&ro, c, coordinator)
	done := runInBackground(ro)
	for range 7 {
		select {
		case <-took:
		case <-time.After(time.Minute):
			t.Fatal("the misbehaving workers did not each take a game within a minute")
		}
	}
	for _, name := range []string{"w1", "w2"} {
		tw, q, _ := worker(name)
		start(tw.Play, q)
	}
	r := <-done
	got, err := r.sum, r.err
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if got.Done != want.Done || got.Done < 6 || got.Unplayed != 0 {
		t.Fatalf("%d of %d played remotely (%d unplayed), %d locally", got.Done, got.Total, got.Unplayed, want.Done)
	}
	if g, w := tournament.String(got.Standings, tournament.SwissTieBreaks()), tournament.String(want.Standings, tournament.SwissTieBreaks()); g != w {
		t.Fatalf("standings differ:\nremote\n%s\nlocal\n%s", g, w)
	}
	for _, w := range []string{"forger", "impostor", "swapper", "garbler", "teller"} {
		rejected, _ := filepath.Glob(filepath.Join(remoteDir, "games", "*.rejected-"+w))
		if len(rejected) != 1 {
			t.Fatalf("%d rejected game directories of %s, want 1", len(rejected), w)
		}
	}
	// Each misbehaving worker is suspended, with why; the honest ones and
	// the one that died are not.
	out, err := roster.Suspended(c.Workers)
	if err != nil {
		t.Fatal(err)
	}
	for w, why := range map[string]string{"forger": "does not replay", "impostor": "signed by key", "swapper": "it is not the game it was sent: white differs",
		"garbler": "cannot be read", "loser": "could not be fetched", "teller": "its result.json says"} {
		if s, ok := out[w]; !ok || !strings.Contains(s.Reason, why) || s.Game == 0 || s.At.IsZero() {
			t.Errorf("worker %s: suspension %+v, want one saying %q", w, s, why)
		}
	}
	for _, w := range []string{"w1", "w2", "dies"} {
		if _, ok := out[w]; ok {
			t.Errorf("worker %s is suspended", w)
		}
	}
	st, err := tournament.Load(context.Background(), remoteDir)
	if err != nil {
		t.Fatal(err)
	}
	retried, by := 0, map[string]int{}
	for _, g := range st.Games {
		if g.Status != tournament.Done {
			t.Fatalf("game %d is %s", g.ID, g.Status)
		}
		retried += g.Rejected
		if g.Attempts != 1 {
			t.Errorf("game %d spent %d attempts (%q, by %q): a refused result is the worker's, not the game's", g.ID, g.Attempts, g.AbortReason, g.AbortedBy)
		}
		if g.TurnMs <= 0 {
			t.Fatalf("game %d has no median turn time", g.ID)
		}
		if g.SlotMs != 0 {
			t.Errorf("game %d, a worker's, says it held a place here %g ms", g.ID, g.SlotMs)
		}
		by[g.Worker]++
	}
	if retried != 6 {
		t.Fatalf("%d results refused, want the forged, the impostor's, the swapped, the garbled, the lost one and the edited result.json", retried)
	}
	if by["w1"]+by["w2"] != len(st.Games) {
		t.Fatalf("games by worker: %v; only the honest workers' count", by)
	}
	rows := map[string]tournament.WorkerRow{}
	for _, w := range st.Workers {
		rows[w.Name] = w
	}
	if w := rows["w1"]; w.Games != by["w1"] || w.Machine.Host != "test" || w.TurnMs <= 0 || rows["forger"].Games != 0 {
		t.Fatalf("workers in the report: %+v", st.Workers)
	}
	page := string(st.HTML())
	for _, want := range []string{"<h2>Workers</h2>", "w1", "w2"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the report has no %q", want)
		}
	}
}

// A worker that plays every game with the sides swapped joins first, alone,
// with a slot for every game: it is suspended at its first result, told
// why and shut out; no game spends an attempt on it, and the honest worker
// that joins later plays every game, the standings a local run's.
func TestALyingWorkerIsShutOutAndStarvesNoGame(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	lo, want := playedHere(t, bots)

	c := distribtest.Start(t, "liar-test", 2*time.Second, "liar", "honest")
	coordinator := c.Coordinator(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	liar, q, nc := joined(t, c, "liar")
	told := toldSuspended(t, q, "liar")
	var handedIn sync.Once
	var lied time.Time
	var mu sync.Mutex
	lw := &distrib.Worker{Queue: q, Slots: 6, Machine: json.RawMessage(`{"host":"liar","cpus":6,"sandbox":"local"}`),
		Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
			var sp spec
			if err := json.Unmarshal(j.Spec, &sp); err != nil {
				return nil, err
			}
			sp.White, sp.Black = sp.Black, sp.White
			swapped, err := json.Marshal(sp)
			if err != nil {
				return nil, err
			}
			j.Spec = swapped
			archive, err := liar.Play(ctx, j)
			handedIn.Do(func() { mu.Lock(); lied = time.Now(); mu.Unlock() })
			return archive, err
		}}
	wg.Add(1)
	go func() { defer wg.Done(); lw.Run(ctx) }()

	ro := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules = lo.Config.Rules
	ro.MaxAttempts = 3
	remoteOn(&ro, c, coordinator)
	done := runInBackground(ro)
	var s roster.Suspension
	select {
	case s = <-told:
	case r := <-done:
		t.Fatalf("the tournament ended before the liar was suspended: %+v %v", r.sum, r.err)
	case <-time.After(time.Minute):
		t.Fatal("the lying worker was not suspended within a minute")
	}
	mu.Lock()
	t.Logf("suspended %v after its first result was handed in: %s", time.Since(lied).Round(time.Millisecond), s)
	mu.Unlock()
	if !strings.Contains(s.Reason, "it is not the game it was sent: white differs") {
		t.Errorf("the liar was told %q", s.Reason)
	}
	// The queue lets it in no more.
	for deadline := time.Now().Add(10 * time.Second); nc.IsConnected(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the suspended worker is still connected")
		}
	}
	if _, err := distrib.Connect(c.Server.URL(), must(c.Creds["liar"].Options())...); err == nil {
		t.Error("the suspended worker connects again")
	}

	honestFinishes(t, ctx, c, &wg, done, want)
	if n := coordinator.Stats().Results["refused"]; n < 1 {
		t.Errorf("the queue counts %d results refused, want the liar's", n)
	}
	st, err := tournament.Load(context.Background(), ro.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Games {
		if g.Worker != "honest" || g.Attempts != 1 {
			t.Errorf("game %d: played by %q after %d attempts, want the honest worker's first", g.ID, g.Worker, g.Attempts)
		}
	}
}

// honestFinishes joins the honest worker of c (playing until ctx ends, on
// wg) and waits for the run done to end with every one of its 6 games
// played and the standings of the local run want.
func honestFinishes(t *testing.T, ctx context.Context, c *distribtest.Cluster, wg *sync.WaitGroup, done <-chan ran, want *tournament.Summary, wrap ...func(distrib.Player) distrib.Player) {
	t.Helper()
	honest, hq, _ := joined(t, c, "honest")
	play := distrib.Player(honest.Play)
	for _, w := range wrap {
		play = w(play)
	}
	hw := &distrib.Worker{Queue: hq, Slots: 2, Play: play, Machine: json.RawMessage(`{"host":"honest","cpus":2,"sandbox":"local"}`)}
	wg.Add(1)
	go func() { defer wg.Done(); hw.Run(ctx) }()
	var r ran
	select {
	case r = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the tournament did not end within 3 minutes of the honest worker's joining")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.Done != want.Done || r.sum.Unplayed != 0 {
		t.Fatalf("%d of %d played, %d unplayed: want every game played", r.sum.Done, r.sum.Total, r.sum.Unplayed)
	}
	if g, w := tournament.String(r.sum.Standings, tournament.SwissTieBreaks()), tournament.String(want.Standings, tournament.SwissTieBreaks()); g != w {
		t.Fatalf("standings differ:\nremote\n%s\nlocal\n%s", g, w)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// joined is an enrolled worker of c joined to its queue, playing on the
// local sandbox with its enrolled key; its connection is returned for tests
// that cut it.
func joined(t *testing.T, c *distribtest.Cluster, name string) (*Worker, *distrib.Queue, *nats.Conn) {
	t.Helper()
	q, nc := c.Worker(t, name)
	key, err := c.Creds[name].SigningKey()
	if err != nil {
		t.Fatal(err)
	}
	return &Worker{Queue: q, Backend: &local.Backend{Dir: t.TempDir()}, Scratch: t.TempDir(), Signer: key}, q, nc
}

// remoteOn sends o's games to the cluster c through coordinator, suspending
// a worker whose result is refused and checking results against the keys c
// enrolled.
func remoteOn(o *Options, c *distribtest.Cluster, coordinator *distrib.Queue) {
	o.Remote = Sole(coordinator)
	o.Remote.Suspend = func(s roster.Suspension) error { return distrib.Shut(coordinator, c.Server, c.Workers, s) }
	o.WorkerKey = func(w string) (string, error) { return distrib.SigningKeyOf(c.Workers, w) }
}

// playedHere is o's round robin of bots (20 plies a game) played on this
// machine's local sandbox, with its summary: what a remote run must give.
func playedHere(t *testing.T, bots []*submission.Bot) (o Options, want *tournament.Summary) {
	t.Helper()
	o = options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
	o.Config.Rules = map[string]string{"maxPlies": "20"}
	want, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return o, want
}

// toldSuspended hears, on worker's queue q, that the coordinator
// suspended it, until the test ends.
func toldSuspended(t *testing.T, q *distrib.Queue, worker string) <-chan roster.Suspension {
	t.Helper()
	told := make(chan roster.Suspension, 1)
	stop, err := q.OnControl(func(c distrib.Control) {
		if c.Suspended != nil && c.Suspended.Worker == worker {
			select {
			case told <- *c.Suspended:
			default:
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return told
}

// ran is how a tournament run in the background ended.
type ran struct {
	sum *tournament.Summary
	err error
}

// runInBackground runs o and hands over how it ended.
func runInBackground(o Options) <-chan ran {
	done := make(chan ran, 1)
	go func() {
		got, err := Run(context.Background(), o)
		done <- ran{got, err}
	}()
	return done
}

// A worker that takes games and drops them (it terminates them in the queue
// without a result, saying it plays them) stalls nothing: each game goes to
// another worker once its deadline passes, the dropper is charged and, at
// its second, suspended; the standings are a local run's.
func TestAGameAWorkerDropsGoesToAnother(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	lo, want := playedHere(t, bots)
	c := distribtest.Start(t, "drop-test", 2*time.Second, "dropper", "honest")
	coordinator := c.Coordinator(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ro := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules = lo.Config.Rules
	ro.MaxAttempts = 3
	remoteOn(&ro, c, coordinator)
	ro.Remote.Deadline = func(match.Config) time.Duration { return 8 * time.Second }
	done := runInBackground(ro)

	// The dropper, speaking to the queue with its own credentials: it asks
	// for two games and says it plays them for as long as it likes.
	_, nc := c.Worker(t, "dropper")
	var held []distrib.Job
	for len(held) < 2 {
		m, err := nc.Request("arena.drop-test.want.dropper", nil, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Data) == 0 {
			continue
		}
		var j distrib.Job
		if err := json.Unmarshal(m.Data, &j); err != nil {
			t.Fatal(err)
		}
		held = append(held, j)
	}
	go func() {
		for ctx.Err() == nil {
			for _, j := range held {
				news, _ := json.Marshal(distrib.Notice{Handout: j.Handout, Game: j.Game, Attempt: j.Attempt, Plies: 1})
				nc.Publish("arena.drop-test.playing.dropper", news)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	honestFinishes(t, ctx, c, &wg, done, want)
	out, err := roster.Suspended(c.Workers)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := out["dropper"]; !ok || !strings.Contains(s.Reason, "2 games it took passed their deadlines without a result") {
		t.Errorf("the dropper's suspension: %+v (%v)", s, ok)
	}
	if _, ok := out["honest"]; ok {
		t.Error("the honest worker was suspended")
	}
}

// A game's deadline is its most turns, each at its wall-clock cap and its
// program's start, and a margin: from its ply limit, or the game's default.
func TestGameDeadline(t *testing.T) {
	t.Parallel()
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = time.Second
	turn := sandbox.WallCap(time.Second) + rules.ProgramStart
	for _, c := range []struct {
		cfg  match.Config
		want time.Duration
	}{
		{match.Config{Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "20"}, Limits: lim}, (20+setupTurns)*turn + deadlineMargin},
		{match.Config{Game: codeclash.Game{}, Limits: lim}, (200+setupTurns)*turn + deadlineMargin}, // the game's default
		{match.Config{Game: tiles.Game{}, Limits: lim}, unlimitedTurns*turn + deadlineMargin},       // no ply limit
	} {
		if got := GameDeadline(c.cfg); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.cfg.Game.Name(), c.cfg.Rules, got, c.want)
		}
	}
}

// A result brings its evidence and nothing more: a blob its transcript does
// not name (150 MB of noise beside an honest game, a zstd bomb), or data
// files past its evidence budget, refuse it.
func TestAResultHoldsOnlyWhatItsTranscriptNames(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "m")
	if _, err := match.Run(context.Background(), match.Config{Game: codeclash.Game{}, Seed: 3, Rules: map[string]string{"maxPlies": "12"},
		White: fixtureBot(t, "legal"), Black: fixtureBot(t, "legal"), Backend: &local.Backend{Dir: t.TempDir()},
		Limits: sandbox.DefaultLimits(), Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if err := onlyNamed(dir, transcript.Evidence{}); err != nil {
		t.Fatalf("an honest game: %v", err)
	}
	if err := onlyNamed(dir, transcript.Evidence{Budget: 1}); err == nil || !strings.Contains(err.Error(), "more than the evidence budget of 1") {
		t.Errorf("past its budget: %v", err)
	}
	extra, _, err := transcript.PutBlob(dir, []byte("noise the transcript never names"))
	if err != nil {
		t.Fatal(err)
	}
	if err := onlyNamed(dir, transcript.Evidence{}); err == nil || !strings.Contains(err.Error(), extra) {
		t.Errorf("an unnamed blob: %v", err)
	}
	// Rejected, it is kept as evidence without its junk: the transcript,
	// the result, and what else came, by name, size and hash.
	junk := bytes.Repeat([]byte("noise "), 200_000)
	if err := os.WriteFile(filepath.Join(dir, "junk.bin"), junk, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pruneRejected(dir); err != nil {
		t.Fatal(err)
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, rel)
		}
		return nil
	})
	slices.Sort(left)
	if want := []string{rejectedManifest, transcript.ResultFile, transcript.FileName}; !slices.Equal(left, want) {
		t.Errorf("kept %v, want %v", left, want)
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, rejectedManifest))
	sum := sha256.Sum256(junk)
	if !strings.Contains(string(manifest), fmt.Sprintf("\"junk.bin\"\t%d\t%x\n", len(junk), sum)) || !strings.Contains(string(manifest), extra) {
		t.Errorf("the manifest of what was sent:\n%s", manifest)
	}
}

// What a worker says of its machine is checked: a description that cannot
// be true is dropped (never the result with it).
func TestAWorkersMachineIsChecked(t *testing.T) {
	t.Parallel()
	if m, err := checkMachine(json.RawMessage(`{"host":"w1","cpus":8,"sandbox":"docker","bench":[{"name":"turn","p50Ms":1.5,"p99Ms":3}]}`)); err != nil || m.CPUs != 8 {
		t.Fatalf("an honest machine: %+v %v", m, err)
	}
	for _, bad := range []string{
		`{"host":"w1","cpus":4096,"sandbox":"docker"}`,
		`{"host":"w1","cpus":0,"sandbox":"docker"}`,
		`{"host":"w1","cpus":2.5}`,
		`{"host":"w1","cpus":2,"owner":"me"}`,
		`{"host":"` + strings.Repeat("x", 300) + `","cpus":2}`,
		`{"host":"a\u0007b","cpus":2}`,
		`{"host":"w1","cpus":2,"bench":[{"name":"turn","p50Ms":-1}]}`,
		`[1]`,
	} {
		if _, err := checkMachine(json.RawMessage(bad)); err == nil {
			t.Errorf("accepted %.60s", bad)
		}
	}
}

// A Swiss tournament and a knockout over workers: the coordinator pairs
// each round once the round before is in, and the standings are a local
// run's.
func TestWorkersPlaySwissAndKnockoutAsALocalRunDoes(t *testing.T) {
	for _, format := range []string{tournament.Swiss, tournament.Knockout} {
		t.Run(format, func(t *testing.T) {
			bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
			setup := func(o *Options) {
				o.Config.Rules = map[string]string{"maxPlies": "20"}
				// The runs are compared game for game: no turn of a bot
				// that answers in milliseconds may be decided by how busy
				// the test machine is.
				o.Config.Limits.TurnTimeout = 30 * time.Second
				o.Config.Format = format
				if format == tournament.Swiss {
					o.Config.Rounds, o.Config.TieBreaks = 3, tournament.SwissTieBreaks()
				}
			}
			lo := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
			setup(&lo)
			want, err := Run(context.Background(), lo)
			if err != nil {
				t.Fatal(err)
			}
			c := distribtest.Start(t, "rounds-"+format, 2*time.Second, "honest")
			coordinator := c.Coordinator(t)
			ro := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
			setup(&ro)
			remoteOn(&ro, c, coordinator)
			done := runInBackground(ro)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			honest, hq, _ := joined(t, c, "honest")
			var wg sync.WaitGroup
			defer wg.Wait()
			defer cancel()
			hw := &distrib.Worker{Queue: hq, Slots: 2, Play: honest.Play}
			wg.Add(1)
			go func() { defer wg.Done(); hw.Run(ctx) }()
			var r ran
			select {
			case r = <-done:
			case <-time.After(3 * time.Minute):
				t.Fatal("the tournament did not end within 3 minutes")
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.sum.Done != want.Done || r.sum.Done == 0 || r.sum.Unplayed != 0 {
				t.Fatalf("%d of %d played remotely, %d locally", r.sum.Done, r.sum.Total, want.Done)
			}
			if g, w := tournament.String(r.sum.Standings, tournament.SwissTieBreaks()), tournament.String(want.Standings, tournament.SwissTieBreaks()); g != w {
				games := func(dir string) string {
					st, err := tournament.Load(context.Background(), dir)
					if err != nil {
						return err.Error()
					}
					var out []string
					for _, g := range st.Games {
						out = append(out, fmt.Sprintf("%d %d-%d %s %s %s", g.ID, g.White, g.Black, g.Winner, g.Reason, g.AbortReason))
					}
					return strings.Join(out, "\n")
				}
				t.Fatalf("standings differ:\nremote\n%s\n%s\nlocal\n%s\n%s", g, games(ro.Dir), w, games(lo.Dir))
			}
		})
	}
}

// A game's deadline runs from its hand-out: a run that waits for workers
// longer than a game's deadline aborts nothing, and workers that join late,
// one after another, in a run that lasts several deadlines, play every game
// without a charge; the standings are a local run's.
func TestAGameWaitingForAWorkerNeverExpires(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	lo := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
	lo.Config.Rules = map[string]string{"maxPlies": "20"}
	lo.Config.GamesPerPair = 10 // a run longer than a deadline
	want, err := Run(context.Background(), lo)
	if err != nil {
		t.Fatal(err)
	}
	c := distribtest.Start(t, "late-test", 2*time.Second, "honest", "later")
	coordinator := c.Coordinator(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ro := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules, ro.Config.GamesPerPair = lo.Config.Rules, lo.Config.GamesPerPair
	ro.MaxAttempts = 1 // an expiry would leave a game unplayed
	remoteOn(&ro, c, coordinator)
	// Short, so that the wait without a worker lasts two deadlines (and the
	// run says it waits once: the next saying is a minute on); long enough
	// for a game and its upload, and for the second worker to join, on a
	// loaded machine (8 s was not, with two packages' tests under -race
	// beside it on two cores; 15 s was not, with gVisor's beside it).
	const deadline = 25 * time.Second
	ro.Remote.Deadline = func(match.Config) time.Duration { return deadline }
	said := &workersWaitWatch{}
	ro.Progress = said
	done := runInBackground(ro)
	time.Sleep(2*deadline + time.Second) // two deadlines, no worker
	if q := said.queued(); len(q) != 1 || q[0] != want.Total {
		t.Errorf("while no worker came, the run said it waited for %v queued games, want once for %d", q, want.Total)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// A second worker joins once the first has played two games; the first
	// plays no more until the second has taken one (or a minute passed), so
	// that a fast machine does not leave it nothing to play.
	var played atomic.Int32
	laterPlays, firstTwo := make(chan struct{}), make(chan struct{})
	var laterOnce, twoOnce sync.Once
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-firstTwo:
		case <-ctx.Done():
			return
		}
		later, lq, _ := joined(t, c, "later")
		lw := &distrib.Worker{Queue: lq, Slots: 1, Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
			laterOnce.Do(func() { close(laterPlays) })
			return later.Play(ctx, j)
		}}
		lw.Run(ctx)
	}()
	honestFinishes(t, ctx, c, &wg, done, want, func(play distrib.Player) distrib.Player {
		return func(ctx context.Context, j distrib.Job) ([]byte, error) {
			if played.Add(1) > 2 {
				twoOnce.Do(func() { close(firstTwo) })
				select {
				case <-laterPlays:
				case <-time.After(time.Minute):
				case <-ctx.Done():
				}
			}
			return play(ctx, j)
		}
	})
	out, err := roster.Suspended(c.Workers)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"honest", "later"} {
		if s, ok := out[w]; ok {
			t.Errorf("worker %s, which joined late, was suspended: %+v", w, s)
		}
	}
	st, err := tournament.OpenStore(ro.Dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Games(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, r := range recs {
		if r.Attempts != 1 || r.AbortReason != "" {
			t.Errorf("game %d was aborted while it waited: %d attempts, %q", r.ID, r.Attempts, r.AbortReason)
		}
		by[r.Worker]++
	}
	if by["honest"] == 0 || by["later"] == 0 {
		t.Errorf("games played by each worker: %v, want both to have played", by)
	}
}

// A worker that sends what no worker sends is suspended at maxStrikes;
// let in again, it is suspended again at maxStrikes of its own new ones,
// not at its first.
func TestAReadmittedWorkerIsStruckOutAgainAtTheThreshold(t *testing.T) {
	dir := t.TempDir()
	wdir := tournament.WorkersDir(dir)
	cr, err := distrib.Enroll(wdir, QueueName(dir), "rogue", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Coordinate(context.Background(), Remote{Dir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts, err := cr.Options()
	if err != nil {
		t.Fatal(err)
	}
	connect := func() *nats.Conn {
		t.Helper()
		for deadline := time.Now().Add(3 * enrolmentPoll); ; time.Sleep(100 * time.Millisecond) {
			nc, err := distrib.Connect(c.URL, append(opts, nats.MaxReconnects(0))...)
			if err == nil {
				return nc
			}
			if time.Now().After(deadline) {
				t.Fatalf("the worker cannot connect: %v", err)
			}
		}
	}
	strike := func(nc *nats.Conn, n int) {
		t.Helper()
		for range n {
			if err := nc.Publish("arena."+QueueName(dir)+".playing.rogue", []byte("not a notice")); err != nil {
				t.Fatal(err)
			}
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	suspendedWithin := func(d time.Duration) bool {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if roster.IsSuspended(wdir, "rogue") {
				return true
			}
		}
		return false
	}
	nc := connect()
	strike(nc, maxStrikes-1)
	if suspendedWithin(time.Second) {
		t.Fatalf("suspended at %d strikes, before %d", maxStrikes-1, maxStrikes)
	}
	strike(nc, 1)
	if !suspendedWithin(5 * time.Second) {
		t.Fatalf("not suspended at %d strikes", maxStrikes)
	}
	// Shut out: its connection is closed once the suspension is done, and
	// only then is it let in again (as an organizer does, told of it).
	for deadline := time.Now().Add(5 * time.Second); !nc.IsClosed(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a suspended worker's connection stays open")
		}
	}
	if _, err := roster.Readmit(wdir, "rogue"); err != nil {
		t.Fatal(err)
	}
	nc = connect()
	defer nc.Close()
	strike(nc, maxStrikes-1)
	if suspendedWithin(time.Second) {
		t.Fatalf("let in again, it was suspended at %d new strikes: its old ones still counted", maxStrikes-1)
	}
	strike(nc, 1)
	if !suspendedWithin(5 * time.Second) {
		t.Fatalf("let in again, it was not suspended at %d new strikes", maxStrikes)
	}
}

// workersWaitWatch keeps what a run says while it waits for workers.
type workersWaitWatch struct {
	mu   sync.Mutex
	said []int
}

func (w *workersWaitWatch) Start(int, int)                                     {}
func (w *workersWaitWatch) GameDone(tournament.Record, string, string, string) {}
func (w *workersWaitWatch) Finish()                                            {}
func (w *workersWaitWatch) WaitingForWorkers(queued int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.said = append(w.said, queued)
}

func (w *workersWaitWatch) queued() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.said)
}

// runsOther is p under its own entry's name, running other's program (a
// fixture bot's play is its file's name: its entry starts the other's
// file, kept under its own name beside it).
func runsOther(p, other sandbox.Program) sandbox.Program {
	swapped := p
	swapped.Files = []sandbox.File{{Name: p.Entry, Mode: 0o755, Data: []byte("#!/bin/sh\nexec \"$(dirname \"$0\")/other/" + other.Entry + "\" \"$@\"\n")}}
	for _, f := range other.Files {
		f.Name = "other/" + f.Name
		swapped.Files = append(swapped.Files, f)
	}
	return swapped
}

// A worker that plays every game with the two programs swapped, each bot's
// name, hash and entry kept, hands in games that replay, are signed by its
// key and are the games it was sent: only the coordinator's own play of the
// same hand-outs tells. Its first two results count unchecked, the rest are
// checked: at its first checked game whose moves the swap changed it is
// suspended, told the ply its game first differs at; that game and the two
// it had counted unchecked are played again by the honest worker, and the
// standings are a local run's.
func TestAWorkerThatSwapsTheProgramsIsCaughtByTheCoordinatorsCheck(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	lo, want := playedHere(t, bots)

	c := distribtest.Start(t, "swap-test", 2*time.Second, "swapper", "honest")
	coordinator := c.Coordinator(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	liar, q, _ := joined(t, c, "swapper")
	told := toldSuspended(t, q, "swapper")
	lw := &distrib.Worker{Queue: q, Slots: 6, Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
		var sp spec
		if err := json.Unmarshal(j.Spec, &sp); err != nil {
			return nil, err
		}
		white, err := liar.bot(ctx, sp.White)
		if err != nil {
			return nil, err
		}
		black, err := liar.bot(ctx, sp.Black)
		if err != nil {
			return nil, err
		}
		sw, sb := *white, *black
		sw.Program, sb.Program = runsOther(white.Program, black.Program), runsOther(black.Program, white.Program)
		game := &Worker{Queue: q, Backend: liar.Backend, Scratch: liar.Scratch, Signer: liar.Signer,
			bots: map[string]*submission.Bot{sp.White: &sw, sp.Black: &sb}}
		return game.Play(ctx, j)
	}}
	wg.Add(1)
	go func() { defer wg.Done(); lw.Run(ctx) }()

	ro := options(t, t.TempDir(), bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules = lo.Config.Rules
	remoteOn(&ro, c, coordinator)
	ro.Remote.Checks = Checks{Pick: func(worker string, nth int) bool { return worker == "swapper" && nth > 2 }}
	done := runInBackground(ro)
	var s roster.Suspension
	select {
	case s = <-told:
	case r := <-done:
		t.Fatalf("the tournament ended before the swapper was suspended: %+v %v", r.sum, r.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the worker that swaps the programs was not suspended within two minutes")
	}
	if !strings.Contains(s.Reason, "not the one the programs it was sent play") || !strings.Contains(s.Detail, "differs first") {
		t.Errorf("the swapper was told %q (%s)", s.Reason, s.Detail)
	}
	honestFinishes(t, ctx, c, &wg, done, want)
	st, err := tournament.Load(context.Background(), ro.Dir)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, g := range st.Games {
		refused += g.Rejected
		if g.Worker != "honest" && !(g.Worker == "swapper" && g.Checked) {
			t.Errorf("game %d counts as played by %q (checked: %v): only the honest worker's games and the swapper's checked ones count", g.ID, g.Worker, g.Checked)
		}
	}
	// The game caught, and the two counted unchecked before it.
	if refused < 3 {
		t.Errorf("%d results refused, want at least the one caught and the two counted unchecked", refused)
	}
	kept, _ := filepath.Glob(filepath.Join(ro.Dir, "games", "*.rejected-swapper.check-*"))
	if len(kept) < 2 {
		t.Errorf("the coordinator's two plays of the game caught are not kept beside it: %v", kept)
	}
}
