package web

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

// The final of an event of 300 teams: a round robin, each pair twice with
// sides swapped.
const (
	liveTeams = 300
	liveGames = liveTeams * (liveTeams - 1) // 89,700
	liveSeed  = 2026
	// liveWindow is one op of the benchmark: the final plays on that long
	// while pages ask for its standings.
	liveWindow = 10 * time.Second
	// liveEvery is how often a game of the final finishes.
	liveEvery = 100 * time.Millisecond
)

// liveFinal is an event of 300 teams playing its final: the schedule in
// DIR/final, each game finished there and recorded as the event's as the
// runner does it.
type liveFinal struct {
	dir     string
	cfg     event.Config
	store   *event.Store
	final   *tournament.Store // DIR/final, open for writing
	games   []tournament.Game
	results []transcript.Result
	sides   []event.Side // by bot
	tokens  []string     // by bot
	played  int
}

// newLiveFinal makes that event with every game of its final finished but
// the last left. Each result is drawn as in a real field: a team has a
// latent strength, a game is a draw one time in six and otherwise won as the
// Elo model expects.
func newLiveFinal(b *testing.B, left int) *liveFinal {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	// The ladder stops when uploads close for the final.
	if err := os.WriteFile(filepath.Join(dir, event.ConfigFile), []byte("game = \"codeclash\"\n[ladder]\nenabled = false\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	f := &liveFinal{dir: dir}
	var err error
	if f.cfg, err = event.LoadConfig(dir); err != nil {
		b.Fatal(err)
	}
	if f.store, err = event.Open(dir); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.store.Close() })
	tc := tournament.Config{Format: tournament.RoundRobin, GamesPerPair: 2, Seed: liveSeed, Game: "codeclash", OnFault: "forfeit",
		Sandbox: "local", Scoring: tournament.DefaultScoring(), TieBreaks: tournament.DefaultTieBreaks()}
	rng := rand.New(rand.NewPCG(liveSeed, 1))
	strength := make([]float64, liveTeams)
	for i := range liveTeams {
		t, err := f.store.AddTeam(ctx, fmt.Sprintf("team-%03d", i), "", "")
		if err != nil {
			b.Fatal(err)
		}
		f.sides = append(f.sides, event.Side{Team: t.ID, Submission: int64(i + 1)})
		f.tokens = append(f.tokens, t.Token)
		tc.Bots = append(tc.Bots, tournament.BotEntry{Name: t.Name, SHA256: fmt.Sprintf("%064x", i), Source: t.Name})
		strength[i] = 200 * rng.NormFloat64()
	}
	if f.games, err = tournament.Schedule(tournament.RoundRobin, liveTeams, -1, 2, liveSeed, 0); err != nil {
		b.Fatal(err)
	}
	if len(f.games) != liveGames {
		b.Fatalf("%d games scheduled, want %d", len(f.games), liveGames)
	}
	for _, g := range f.games {
		res := transcript.Result{Game: "codeclash", Winner: transcript.WinnerDraw, Reason: "points", Plies: 40, Turns: 42, DurationMs: 120,
			White: transcript.BotRef{Name: tc.Bots[g.White].Name, SHA256: tc.Bots[g.White].SHA256},
			Black: transcript.BotRef{Name: tc.Bots[g.Black].Name, SHA256: tc.Bots[g.Black].SHA256}}
		switch p := rng.Float64(); {
		case p < 1.0/6:
		case p < 1.0/6+5.0/6*tournament.ExpectedScore(strength[g.White]-strength[g.Black]):
			res.Winner = transcript.WinnerWhite
		default:
			res.Winner = transcript.WinnerBlack
		}
		f.results = append(f.results, res)
	}
	if err := os.MkdirAll(filepath.Join(dir, event.FinalDir), 0o755); err != nil {
		b.Fatal(err)
	}
	if f.final, err = tournament.OpenStore(filepath.Join(dir, event.FinalDir), false); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.final.Close() })
	if err := f.final.Init(ctx, tc, f.games); err != nil {
		b.Fatal(err)
	}
	f.played = liveGames - left
	// The games played so far are written in one transaction per database,
	// as Finish and AddGame write them: one at a time, each synchronous,
	// they would take minutes. Their directories are left out: the
	// standings read none.
	played := f.games[:f.played]
	bulk(b, filepath.Join(dir, event.FinalDir, tournament.DBFile), func(tx *sql.Tx) error {
		for i, g := range played {
			r := f.results[i]
			if _, err := tx.Exec(`UPDATE games SET status = ?, attempts = 1, winner = ?, reason = ?, plies = ?, turns = ?, dir = ?,
				duration_ms = ?, bot_ms = 80, turn_ms = 2 WHERE id = ?`, tournament.Done, r.Winner, r.Reason, r.Plies, r.Turns,
				f.gameDir(i), r.DurationMs, g.ID); err != nil {
				return err
			}
		}
		return nil
	})
	bulk(b, filepath.Join(dir, event.DBFile), func(tx *sql.Tx) error {
		at := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
		for i, g := range played {
			r, w, bl := f.results[i], f.sides[g.White], f.sides[g.Black]
			if _, err := tx.Exec(`INSERT INTO games (kind, white_team, black_team, white_submission, black_submission, white_name, black_name,
				white_sha256, black_sha256, dir, winner, reason, plies, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				event.FinalGame, w.Team, bl.Team, w.Submission, bl.Submission, r.White.Name, r.Black.Name, r.White.SHA256, r.Black.SHA256,
				filepath.Join(event.FinalDir, f.gameDir(i)), r.Winner, r.Reason, r.Plies, at); err != nil {
				return err
			}
		}
		return nil
	})
	return f
}

// bulk runs fill in one transaction on the SQLite database at path.
func bulk(b *testing.B, path string, fill func(*sql.Tx) error) {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	if err := fill(tx); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
}

// gameDir is the directory of game i in DIR/final, named as the runner
// names it.
func (f *liveFinal) gameDir(i int) string {
	r := f.results[i]
	return filepath.Join("games", fmt.Sprintf("%05d-%s-vs-%s", f.games[i].ID, r.White.Name, r.Black.Name))
}

// finish plays the next game as the final's runner does: its result.json
// in its directory, the game finished in DIR/final, then recorded as the
// event's.
func (f *liveFinal) finish(ctx context.Context) error {
	g, res, rel := f.games[f.played], f.results[f.played], f.gameDir(f.played)
	dir := filepath.Join(f.dir, event.FinalDir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, transcript.ResultFile), data, 0o644); err != nil {
		return err
	}
	if err := f.final.Finish(ctx, g.ID, res, rel, tournament.Times{BotMs: 80, TurnMs: 2}, ""); err != nil {
		return err
	}
	if _, err := f.store.AddGame(ctx, event.FinalGame, dir, f.sides[g.White], f.sides[g.Black], 0); err != nil {
		return err
	}
	f.played++
	return nil
}

// BenchmarkLiveStandings300TeamFinal is the live standings of a 300-team
// final (89,700 games, all but the last 100 per op played) on a server whose
// watcher follows it as arena serve's does. Each op is 10 s of the final
// playing on, a game finishing every 100 ms, while 8 pages follow the
// standings' stream and fetch /standings each time they are told, and 16
// visitors (half of them logged-in teams) ask for / or /standings every 0 to
// 100 ms. It reports the requests' p50, p99 and max latency, how often a
// follower was told the standings changed, and recompute-ms, the time to
// compute the final's boards once. The target is a p99 under 50 ms. Run it
// with -benchtime=1x: building the final takes some 10 s.
func BenchmarkLiveStandings300TeamFinal(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a final of 89,700 games")
	}
	f := newLiveFinal(b, b.N*int(liveWindow/liveEvery))
	s := New(f.store, f.cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	start := time.Now()
	if _, _, err := f.store.FinalBoards(context.Background()); err != nil {
		b.Fatal(err)
	}
	recompute := time.Since(start)

	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	defer s.CloseStreams() // before the server waits for its streams
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var watching sync.WaitGroup
	defer watching.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watching.Add(1)
	go func() {
		defer watching.Done()
		s.watchFinal(ctx, time.Second) // as arena serve does
	}()

	var mu sync.Mutex
	var lat []time.Duration
	told := 0
	get := func(ctx context.Context, path, token string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		d := time.Since(start)
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: status %d", path, res.StatusCode)
		}
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		return nil
	}
	// The pages' first load computes the boards, as a server's first
	// visitor does.
	if err := get(ctx, "/standings", ""); err != nil {
		b.Fatal(err)
	}
	lat = nil

	b.ResetTimer()
	for range b.N {
		window, stop := context.WithTimeout(ctx, liveWindow)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the final plays on
			defer wg.Done()
			t := time.NewTicker(liveEvery)
			defer t.Stop()
			for {
				select {
				case <-window.Done():
					return
				case <-t.C:
				}
				if f.played == len(f.games) {
					return // over
				}
				if err := f.finish(context.Background()); err != nil {
					b.Error(err)
					return
				}
			}
		}()
		for i := range 8 { // pages following the standings
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequestWithContext(window, http.MethodGet, srv.URL+"/standings/events", nil)
				if err != nil {
					b.Error(err)
					return
				}
				req.Header.Set("Authorization", "Bearer "+f.tokens[i])
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				defer res.Body.Close()
				sc := bufio.NewScanner(res.Body)
				for sc.Scan() {
					if !strings.HasPrefix(sc.Text(), "data:") {
						continue
					}
					if i == 0 {
						mu.Lock()
						told++
						mu.Unlock()
					}
					if err := get(window, "/standings", f.tokens[i]); err != nil && window.Err() == nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		for i := range 16 { // visitors
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(liveSeed, uint64(i)))
				for n := 0; ; n++ {
					select {
					case <-window.Done():
						return
					case <-time.After(time.Duration(rng.Int64N(int64(100 * time.Millisecond)))):
					}
					token := ""
					if i%2 == 1 {
						token = f.tokens[100+i]
					}
					path := "/"
					if n%2 == 1 {
						path = "/standings"
					}
					if err := get(window, path, token); err != nil && window.Err() == nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		stop()
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) == 0 {
		b.Fatal("no request answered")
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(recompute), "recompute-ms")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(float64(len(lat))/float64(b.N), "requests/op")
	b.ReportMetric(float64(told)/float64(b.N), "told/op")
}
