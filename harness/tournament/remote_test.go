package tournament

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox/local"
)

// queue opens the tournament's queue as its coordinator (coordinator) or
// joins it as a worker.
func queue(t *testing.T, url string, coordinator bool) (*distrib.Queue, *nats.Conn) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var q *distrib.Queue
	if coordinator {
		q, err = distrib.Open(context.Background(), nc, "remote-test", 2*time.Second)
	} else {
		q, err = distrib.Join(context.Background(), nc, "remote-test")
	}
	if err != nil {
		t.Fatal(err)
	}
	return q, nc
}

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
// edited, the chain recomputed) is rejected and the game played again.
func TestWorkersPlayTheTournamentALocalRunPlays(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	localDir := t.TempDir()
	lo := options(t, localDir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	lo.Config.Rules = map[string]string{"maxPlies": "20"}
	want, err := Run(context.Background(), lo)
	if err != nil {
		t.Fatal(err)
	}

	srv, err := distrib.StartServer(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	coordinator, _ := queue(t, srv.URL(), true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := func(name string, play distrib.Player, q *distrib.Queue) {
		w := &distrib.Worker{Queue: q, Name: name, Slots: 1, Play: play}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}
	for _, name := range []string{"w1", "w2"} {
		q, _ := queue(t, srv.URL(), false)
		tw := &Worker{Queue: q, Backend: &local.Backend{Dir: t.TempDir()}, Scratch: t.TempDir()}
		start(name, tw.Play, q)
	}
	// One worker dies in its first game; another forges its first result.
	dq, dconn := queue(t, srv.URL(), false)
	start("dies", func(ctx context.Context, j distrib.Job) ([]byte, error) {
		dconn.Close()
		<-ctx.Done()
		return nil, ctx.Err()
	}, dq)
	fq, fconn := queue(t, srv.URL(), false)
	forger := &Worker{Queue: fq, Backend: &local.Backend{Dir: t.TempDir()}, Scratch: t.TempDir()}
	var once sync.Once
	start("forger", func(ctx context.Context, j distrib.Job) ([]byte, error) {
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
	}, fq)

	remoteDir := t.TempDir()
	ro := options(t, remoteDir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules = lo.Config.Rules
	ro.Remote = coordinator
	got, err := Run(context.Background(), ro)
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
	rejected, _ := filepath.Glob(filepath.Join(remoteDir, "games", "*.rejected-forger"))
	if len(rejected) != 1 {
		t.Fatalf("%d rejected game directories, want the forger's one", len(rejected))
	}
	st, err := Load(context.Background(), remoteDir)
	if err != nil {
		t.Fatal(err)
	}
	retried := 0
	for _, g := range st.Games {
		if g.Status != Done {
			t.Fatalf("game %d is %s", g.ID, g.Status)
		}
		if g.Attempts > 1 {
			retried++
		}
	}
	if retried == 0 {
		t.Fatal("the forged game was not played again")
	}
}
