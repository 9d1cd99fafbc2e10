package tournament

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
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

// Games spread over workers give the standings a run on one machine gives:
// a worker that dies mid-game loses nothing, and a forged result (a winner
// edited, the chain recomputed), one signed by another key and another game
// (the sides swapped) are rejected and the game played again.
func TestWorkersPlayTheTournamentALocalRunPlays(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	localDir := t.TempDir()
	lo := options(t, localDir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	lo.Config.Rules = map[string]string{"maxPlies": "20"}
	want, err := Run(context.Background(), lo)
	if err != nil {
		t.Fatal(err)
	}

	c := distribtest.Start(t, "remote-test", 2*time.Second, "w1", "w2", "dies", "forger", "impostor", "swapper")
	coordinator := c.Coordinator(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := func(play distrib.Player, q *distrib.Queue) {
		w := &distrib.Worker{Queue: q, Slots: 1, Play: play, Machine: json.RawMessage(`{"host":"test","cpus":1,"sandbox":"local"}`)}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}
	worker := func(name string) (*Worker, *distrib.Queue, *nats.Conn) {
		q, nc := c.Worker(t, name)
		key, err := c.Creds[name].SigningKey()
		if err != nil {
			t.Fatal(err)
		}
		return &Worker{Queue: q, Backend: &local.Backend{Dir: t.TempDir()}, Scratch: t.TempDir(), Signer: key}, q, nc
	}
	// The misbehaving workers each take a game before the honest ones
	// join: however loaded the host, each misbehaves once.
	took := make(chan string, 8)
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

	remoteDir := t.TempDir()
	ro := options(t, remoteDir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules = lo.Config.Rules
	ro.Remote = Sole(coordinator)
	ro.WorkerKey = func(w string) (string, error) { return distrib.SigningKeyOf(c.Workers, w) }
	type ran struct {
		sum *Summary
		err error
	}
	done := make(chan ran, 1)
	go func() {
		got, err := Run(context.Background(), ro)
		done <- ran{got, err}
	}()
	for range 4 {
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
	if got.Done != want.Done || got.Done != 6 || got.Unplayed != 0 {
		t.Fatalf("%d of %d played remotely (%d unplayed), %d locally", got.Done, got.Total, got.Unplayed, want.Done)
	}
	if g, w := String(got.Standings), String(want.Standings); g != w {
		t.Fatalf("standings differ:\nremote\n%s\nlocal\n%s", g, w)
	}
	for _, w := range []string{"forger", "impostor", "swapper"} {
		rejected, _ := filepath.Glob(filepath.Join(remoteDir, "games", "*.rejected-"+w))
		if len(rejected) != 1 {
			t.Fatalf("%d rejected game directories of %s, want 1", len(rejected), w)
		}
	}
	st, err := Load(context.Background(), remoteDir)
	if err != nil {
		t.Fatal(err)
	}
	retried, by := 0, map[string]int{}
	for _, g := range st.Games {
		if g.Status != Done {
			t.Fatalf("game %d is %s", g.ID, g.Status)
		}
		if g.Attempts > 1 {
			retried++
		}
		if g.TurnMs <= 0 {
			t.Fatalf("game %d has no median turn time", g.ID)
		}
		by[g.Worker]++
	}
	if retried < 3 {
		t.Fatalf("%d games played again, want the forged, the impostor's and the swapped one", retried)
	}
	if by["w1"]+by["w2"] != 6 {
		t.Fatalf("games by worker: %v; only the honest workers' count", by)
	}
	rows := map[string]WorkerRow{}
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
