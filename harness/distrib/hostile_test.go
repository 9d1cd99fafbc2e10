package distrib_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
)

// A hostile worker, speaking NATS itself with an enrolled worker's real
// credentials, tries everything its rights leave it, against an honest
// worker's games: it cannot end, hide, steal or hold another worker's game,
// nor count a result of a game it was not given; each attempt is refused
// or counted against it, and every game is played once, by the honest
// worker, whose games are never handed out twice.
func TestAHostileWorkerCanNeitherEndStealNorHoldAGame(t *testing.T) {
	c := distribtest.Start(t, "cup", time.Second, "honest", "hostile")
	coord := c.Coordinator(t)
	var smu sync.Mutex
	strikes := map[string][]string{}
	coord.OnStrike(func(s distrib.Strike) {
		smu.Lock()
		strikes[s.Worker] = append(strikes[s.Worker], s.Why)
		smu.Unlock()
	})
	const games = 8
	for g := 1; g <= games; g++ {
		if _, err := coord.Publish(context.Background(), distrib.Job{Game: g, Attempt: 1, Spec: json.RawMessage(fmt.Sprintf(`{"seed":%d}`, g))}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The hostile worker takes a game first, then goes silent on it.
	h := c.Conn(t, "hostile")
	ask := func() distrib.Job { return askForGame(t, h, "arena.cup.want.hostile") }
	mine := ask()

	// The honest worker plays slowly enough that its games are held while
	// the hostile one works.
	hq, _ := c.Worker(t, "honest")
	var pmu sync.Mutex
	handouts := map[int][]string{}
	held := make(chan distrib.Job, games)
	honest := &distrib.Worker{Queue: hq, Slots: 2, Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
		pmu.Lock()
		handouts[j.Game] = append(handouts[j.Game], j.Handout)
		pmu.Unlock()
		held <- j
		time.Sleep(400 * time.Millisecond)
		return []byte(fmt.Sprintf("game %d: %s", j.Game, j.Spec)), nil
	}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); honest.Run(ctx) }()
	var theirs distrib.Job
	select {
	case theirs = <-held:
	case <-time.After(time.Minute):
		t.Fatal("the honest worker was handed no game in a minute")
	}

	// Rights it does not have: acknowledging, terminating or delaying a
	// message of any stream, asking as another worker, reading the
	// hand-outs.
	denied := make(chan error, 16)
	h.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err })
	for _, subj := range []string{
		"$JS.ACK.GAMES_cup.workers.1.1.1.0.0", "$JS.ACK.RESULTS_cup.coordinator.1.1.1.0.0",
		"arena.cup.want.honest", "arena.cup.playing.honest", "$JS.API.STREAM.MSG.GET.KV_HANDOUTS_cup",
		"$JS.API.CONSUMER.CREATE.KV_HANDOUTS_cup",
	} {
		if err := h.Publish(subj, []byte("+TERM")); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-denied:
			if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Fatalf("publish to %s: %v", subj, err)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("the hostile worker may publish to %s", subj)
		}
	}

	// News of a game it does not hold: the honest worker's (given back, or
	// kept alive), and a hand-out never made.
	notice := func(n distrib.Notice) {
		data, _ := json.Marshal(n)
		if err := h.Publish("arena.cup.playing.hostile", data); err != nil {
			t.Fatal(err)
		}
	}
	notice(distrib.Notice{Handout: theirs.Handout, Game: theirs.Game, Attempt: theirs.Attempt, Back: true})
	notice(distrib.Notice{Handout: theirs.Handout, Game: theirs.Game, Attempt: theirs.Attempt, Plies: 3})
	run := mine.Handout[:strings.LastIndexByte(mine.Handout, '-')]
	notice(distrib.Notice{Handout: run + "-999", Game: 1, Attempt: 1})
	notice(distrib.Notice{Handout: "x", Game: 1})
	h.Publish("arena.cup.playing.hostile", []byte("not json"))

	// Results of games it was not given: the honest worker's hand-out, its
	// own hand-out said to be another game, a hand-out never made.
	hjs := c.Conn(t, "hostile")
	result := func(r distrib.Result) {
		t.Helper()
		r.Worker, r.Tournament = "hostile", "cup"
		data, _ := json.Marshal(r)
		if err := hjs.Publish("arena.cup.results.hostile", data); err != nil {
			t.Fatal(err)
		}
	}
	result(distrib.Result{Game: theirs.Game, Attempt: 1, Handout: theirs.Handout})
	other := 1
	if mine.Game == 1 {
		other = 2
	}
	result(distrib.Result{Game: other, Attempt: 1, Handout: mine.Handout})
	result(distrib.Result{Game: 3, Attempt: 1, Handout: run + "-777"})
	hjs.Flush()

	// A flood of requests for games.
	for range 2000 {
		h.Publish("arena.cup.want.hostile", nil)
	}
	h.Flush()

	seen := map[int][]distrib.Result{}
	var forged []distrib.Result
	cctx, stop := context.WithTimeout(ctx, 60*time.Second)
	defer stop()
	err := coord.Collect(cctx, func(r distrib.Result, ar io.Reader) error {
		if r.Forged != "" {
			forged = append(forged, r)
			return nil
		}
		if r.Stale {
			return nil
		}
		data, err := io.ReadAll(ar)
		if err != nil {
			return err
		}
		if want := fmt.Sprintf(`game %d: {"seed":%d}`, r.Game, r.Game); string(data) != want {
			return fmt.Errorf("game %d: archive %q", r.Game, data)
		}
		seen[r.Game] = append(seen[r.Game], r)
		if len(seen) == games {
			stop()
		}
		return nil
	})
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for g := 1; g <= games; g++ {
		rs := seen[g]
		if len(rs) != 1 || rs[0].Worker != "honest" {
			t.Errorf("game %d: results %+v, want one by the honest worker", g, rs)
			continue
		}
		// Only the game the hostile worker took and dropped went out twice.
		if want := uint64(1); g == mine.Game {
			if rs[0].Delivered != 2 {
				t.Errorf("the game the hostile worker dropped: delivered %d times", rs[0].Delivered)
			}
		} else if rs[0].Delivered != want || len(handouts[g]) != 1 {
			t.Errorf("game %d was handed out %d times (%v): the hostile worker took it from its holder", g, rs[0].Delivered, handouts[g])
		}
	}
	if len(forged) != 3 {
		t.Fatalf("%d forged results seen, want 3: %+v", len(forged), forged)
	}
	// Results are checked concurrently: in any order.
	var whys []string
	for _, r := range forged {
		whys = append(whys, r.Forged)
	}
	for _, why := range []string{"went to worker honest", "which was game", "never made"} {
		if !strings.Contains(strings.Join(whys, "\n"), why) {
			t.Errorf("no forged result says %q: %q", why, whys)
		}
	}
	smu.Lock()
	defer smu.Unlock()
	all := fmt.Sprint(strikes["hostile"])
	for _, why := range []string{"which it does not hold", "not one", "a flood"} {
		if !strings.Contains(all, why) {
			t.Errorf("the hostile worker's strikes %q say nothing of %q", strikes["hostile"], why)
		}
	}
	if len(strikes["honest"]) != 0 {
		t.Errorf("the honest worker was struck: %q", strikes["honest"])
	}
	if n, err := coord.Pending(context.Background()); err != nil || n != 0 {
		t.Errorf("%d games still queued or held (%v)", n, err)
	}
}

// What a worker uploads that no result names is deleted once its hand-out
// has ended long enough (sweepAfter): its bucket cannot be kept full. A
// hand-out still held keeps its upload.
func TestUploadsNoResultNamesAreSwept(t *testing.T) {
	t.Cleanup(distrib.SetSweep(50*time.Millisecond, 300*time.Millisecond))
	c := distribtest.Start(t, "cup", 5*time.Second, "hostile")
	coord := c.Coordinator(t)
	if _, err := coord.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	h := c.Conn(t, "hostile")
	m, err := h.Request("arena.cup.want.hostile", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var j distrib.Job
	if err := json.Unmarshal(m.Data, &j); err != nil || j.Handout == "" {
		t.Fatalf("no game: %q %v", m.Data, err)
	}
	js, err := jetstream.New(h)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	up, err := js.ObjectStore(ctx, "UP_cup_W_hostile")
	if err != nil {
		t.Fatal(err)
	}
	junk := strings.Repeat("junk ", 200000)
	for _, name := range []string{"junk-1", "junk-2", "result-" + j.Handout} {
		if _, err := up.PutString(ctx, name, junk); err != nil {
			t.Fatal(err)
		}
	}
	// Kept alive: the held game's upload stays; the junk goes. (Read as the
	// organizer: a worker may not list its bucket, which needs a consumer.)
	admin, err := c.Server.Connect("admin")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ajs, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	seen, err := ajs.ObjectStore(ctx, "UP_cup_W_hostile")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		news, _ := json.Marshal(distrib.Notice{Handout: j.Handout, Game: j.Game, Attempt: j.Attempt})
		h.Publish("arena.cup.playing.hostile", news)
		left := map[string]bool{}
		// Bounded, as the sweep's own: a listing that meets the sweep's
		// deletions may wait for an object that is gone (it hung the
		// package once, and with it the notices that keep the game held).
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		objs, err := seen.List(lctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && time.Now().Before(deadline) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			left[o.Name] = true
		}
		if !left["junk-1"] && !left["junk-2"] {
			if !left["result-"+j.Handout] {
				t.Fatal("the upload of a game still held was swept")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("uploads no result names are still there: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A suspended worker's games go to the others at once: taken back, a game
// it held is handed to the next worker to ask, long before the ack wait.
func TestASuspendedWorkersGamesGoBackAtOnce(t *testing.T) {
	c := distribtest.Start(t, "shut", time.Minute, "honest", "suspect")
	coord := c.Coordinator(t)
	var returned []distrib.Playing
	var mu sync.Mutex
	stop, err := coord.WatchPlaying(func(p distrib.Playing) {
		if p.Returned {
			mu.Lock()
			returned = append(returned, p)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, err := coord.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 1, Spec: json.RawMessage(`{"seed":1}`)}); err != nil {
		t.Fatal(err)
	}
	ask := func(worker string) distrib.Job {
		t.Helper()
		nc := c.Conn(t, worker)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			m, err := nc.Request("arena.shut.want."+worker, nil, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Data) > 0 {
				var j distrib.Job
				if err := json.Unmarshal(m.Data, &j); err != nil {
					t.Fatal(err)
				}
				return j
			}
		}
		t.Fatalf("%s was handed no game within 10 s (the ack wait is a minute)", worker)
		return distrib.Job{}
	}
	if j := ask("suspect"); j.Game != 1 {
		t.Fatalf("the suspect was handed %+v", j)
	}
	if n := coord.TakeBack("suspect"); n != 1 {
		t.Fatalf("took back %d games, want 1", n)
	}
	if j := ask("honest"); j.Game != 1 || j.Attempt != 1 {
		t.Errorf("the honest worker was handed %+v", j)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(returned) != 1 || returned[0].Worker != "suspect" || returned[0].Game != 1 {
		t.Errorf("the watchers were told %+v", returned)
	}
}

// A result judged for longer than the ack wait ends its hand-out when it
// comes in: its game is not handed out again meanwhile, to be played for
// nothing.
func TestAResultJudgedSlowlyIsNotHandedOutAgain(t *testing.T) {
	c := distribtest.Start(t, "slow", time.Second, "first", "second")
	coord := c.Coordinator(t)
	var hmu sync.Mutex
	handouts := 0
	stop, err := coord.WatchPlaying(func(p distrib.Playing) {
		if !p.Returned && p.Game == 1 {
			hmu.Lock()
			handouts++
			hmu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, err := coord.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 1, Spec: json.RawMessage(`{"seed":1}`)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fq, _ := c.Worker(t, "first")
	first := &distrib.Worker{Queue: fq, Slots: 1, Play: func(context.Context, distrib.Job) ([]byte, error) { return []byte("game 1, played"), nil }}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(2)
	go func() { defer wg.Done(); first.Run(ctx) }()
	judging := make(chan struct{})
	judged := make(chan distrib.Result, 1)
	go func() {
		defer wg.Done()
		coord.Collect(ctx, func(r distrib.Result, _ io.Reader) error {
			close(judging)
			time.Sleep(4 * time.Second) // four ack waits
			judged <- r
			return nil
		})
	}()
	select {
	case <-judging:
	case <-time.After(30 * time.Second):
		t.Fatal("no result came in 30 s")
	}
	second := c.Conn(t, "second")
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		m, err := second.Request("arena.slow.want.second", nil, time.Second)
		if errors.Is(err, nats.ErrTimeout) {
			continue // no game for it within the second: still waiting
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Data) > 0 {
			t.Fatalf("while its result was judged, the game was handed out again: %s", m.Data)
		}
	}
	if r := <-judged; r.Game != 1 || r.Worker != "first" {
		t.Errorf("judged %+v", r)
	}
	hmu.Lock()
	defer hmu.Unlock()
	if handouts != 1 {
		t.Errorf("game 1 was handed out %d times while its result was judged, want once", handouts)
	}
}

// A hostile worker describes uploads of 1 GiB with no data behind them,
// for a game it holds and for one the coordinator has since given up on
// (an earlier attempt), while an honest worker plays: the first is refused
// at once, as lost (its sender lied), the second is stale and never
// fetched, and every honest result is counted within a second or two of
// its play.
func TestAForgedUploadStallsNoOne(t *testing.T) {
	c := distribtest.Start(t, "forge", 5*time.Second, "honest", "forger")
	coord := c.Coordinator(t)
	const games = 6
	for g := 1; g <= games; g++ {
		if _, err := coord.Publish(context.Background(), distrib.Job{Game: g, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	h := c.Conn(t, "forger")
	ask := func() distrib.Job { return askForGame(t, h, "arena.forge.want.forger") }
	current, earlier := ask(), ask()
	if current.MaxArchive != distrib.MaxArchive {
		t.Errorf("the hand-out states a cap of %d bytes, want %d", current.MaxArchive, distrib.MaxArchive)
	}
	// The coordinator gives up on the second: a new attempt is queued.
	coord.Withdraw(earlier.Game, earlier.Attempt)
	if _, err := coord.Publish(context.Background(), distrib.Job{Game: earlier.Game, Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	forge := func(j distrib.Job) {
		t.Helper()
		name := "result-" + j.Handout
		info, _ := json.Marshal(jetstream.ObjectInfo{
			ObjectMeta: jetstream.ObjectMeta{Name: name}, Bucket: "UP_forge_W_forger", NUID: "nothing" + j.Handout[len(j.Handout)-1:],
			Size: distrib.MaxArchive, Chunks: distrib.MaxArchive / (128 << 10), Digest: "SHA-256=" + strings.Repeat("A", 43) + "=",
		})
		m := nats.NewMsg("$O.UP_forge_W_forger.M." + base64.URLEncoding.EncodeToString([]byte(name)))
		m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
		m.Data = info
		if err := h.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		r, _ := json.Marshal(distrib.Result{Tournament: "forge", Game: j.Game, Attempt: j.Attempt, Worker: "forger", Handout: j.Handout, Object: name})
		if err := h.Publish("arena.forge.results.forger", r); err != nil {
			t.Fatal(err)
		}
		if err := h.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	forged := time.Now()
	forge(earlier)
	forge(current)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hq, _ := c.Worker(t, "honest")
	var pmu sync.Mutex
	played := map[int]time.Time{}
	honest := &distrib.Worker{Queue: hq, Slots: 2, Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
		time.Sleep(100 * time.Millisecond)
		pmu.Lock()
		played[j.Game] = time.Now()
		pmu.Unlock()
		return []byte(fmt.Sprintf("game %d", j.Game)), nil
	}}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(1)
	go func() { defer wg.Done(); honest.Run(ctx) }()

	var lost, stale []distrib.Result
	var lostAfter time.Duration
	counted := map[int]bool{}
	cctx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	err := coord.Collect(cctx, func(r distrib.Result, ar io.Reader) error {
		switch {
		case r.Forged != "":
			return fmt.Errorf("a result taken as forged: %+v", r)
		case r.Stale:
			stale = append(stale, r)
			return nil
		case r.Lost != "":
			lost = append(lost, r)
			lostAfter = time.Since(forged)
			// As a tournament does: the attempt is given up, the game
			// played again.
			coord.Withdraw(r.Game, r.Attempt)
			_, err := coord.Publish(context.Background(), distrib.Job{Game: r.Game, Attempt: r.Attempt + 1})
			return err
		}
		data, err := io.ReadAll(ar)
		if err != nil {
			return err
		}
		if r.Worker != "honest" || string(data) != fmt.Sprintf("game %d", r.Game) {
			return fmt.Errorf("result %+v with archive %q", r, data)
		}
		pmu.Lock()
		late := time.Since(played[r.Game])
		pmu.Unlock()
		if late > 2*time.Second {
			t.Errorf("game %d's result was counted %v after its play", r.Game, late)
		}
		counted[r.Game] = true
		if len(counted) == games {
			stop()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(counted) != games {
		t.Fatalf("%d games of %d counted", len(counted), games)
	}
	if len(lost) != 1 || lost[0].Game != current.Game || !strings.Contains(lost[0].Lost, "is not there") {
		t.Errorf("the forged upload of a game held: %+v, want one result lost for a chunk that is not there", lost)
	}
	if lostAfter > 5*time.Second {
		t.Errorf("the forged upload was refused %v after it came, want at once", lostAfter)
	}
	if len(stale) != 1 || stale[0].Game != earlier.Game || stale[0].Attempt != 1 {
		t.Errorf("the forged upload of an earlier attempt: %+v, want one stale result", stale)
	}
}

// askForGame asks on subject, as a worker speaking NATS itself, until it is
// handed a game.
func askForGame(t *testing.T, nc *nats.Conn, subject string) distrib.Job {
	t.Helper()
	for {
		m, err := nc.Request(subject, nil, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Data) > 0 {
			var j distrib.Job
			if err := json.Unmarshal(m.Data, &j); err != nil {
				t.Fatal(err)
			}
			return j
		}
	}
}
