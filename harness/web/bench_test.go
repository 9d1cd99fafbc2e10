package web

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/metrics"
)

// benchSize is the size of the event the page benchmark asks of.
type benchSize struct {
	name                      string
	teams, submissions, games int
}

// The benchmark's sizes: the default, and the large one
// (ARENA_BENCH_SIZE=large) of a 1,000-team event.
var (
	benchDefault = benchSize{"default", 300, 3000, 100_000}
	benchLarge   = benchSize{"large", 1000, 10_000, 1_000_000}
)

// benchSizeOf is the size ARENA_BENCH_SIZE names (default: the default).
func benchSizeOf(b *testing.B) benchSize {
	switch v := os.Getenv("ARENA_BENCH_SIZE"); v {
	case "", benchDefault.name:
		return benchDefault
	case benchLarge.name:
		return benchLarge
	default:
		b.Fatalf("ARENA_BENCH_SIZE: want %s or %s, got %q", benchDefault.name, benchLarge.name, v)
	}
	return benchSize{}
}

// seedLarge makes an event of the size's teams, submissions and games,
// ten scrimmages a team among them, and each team's rating after each of
// its ladder pairs (rows only: the game pages read no transcript) and returns a server of
// it, a token of each team and the organizer's. With ARENA_BENCH_DIR set,
// the event is kept in a directory of it named by the size (its tokens in
// tokens.txt, the organizer's first) and reused by the next run: seeding a
// million games takes minutes.
func seedLarge(b *testing.B, size benchSize) (s *Server, tokens []string, admin string, games int64) {
	b.Helper()
	dir := b.TempDir()
	keep := os.Getenv("ARENA_BENCH_DIR")
	if keep != "" {
		dir = filepath.Join(keep, size.name)
	}
	if saved, err := os.ReadFile(filepath.Join(dir, "tokens.txt")); keep != "" && err == nil {
		lines := strings.Fields(string(saved))
		tokens, admin = lines[1:], lines[0]
	} else {
		tokens = seedEvent(b, dir, size)
	}
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		b.Fatal(err)
	}
	st, err := event.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	// As the server does when it starts (and before measuring): a kept
	// event's file may have left the kernel's cache since it was last read.
	if _, err := st.ReadAhead(context.Background()); err != nil {
		b.Fatal(err)
	}
	if admin == "" {
		if admin, err = st.NewAdminToken(context.Background()); err != nil {
			b.Fatal(err)
		}
		if keep != "" {
			if err := os.WriteFile(filepath.Join(dir, "tokens.txt"), []byte(admin+"\n"+strings.Join(tokens, "\n")+"\n"), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	return New(st, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))), tokens, admin, int64(size.games)
}

// seedEvent makes the event of size in dir and returns each team's token.
func seedEvent(b *testing.B, dir string, size benchSize) (tokens []string) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, event.ConfigFile), []byte("game = \"codeclash\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	st, err := event.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range size.teams {
		nt, err := st.AddTeam(ctx, fmt.Sprintf("team %03d", i), "", "")
		if err != nil {
			b.Fatal(err)
		}
		tokens = append(tokens, nt.Token)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, event.DBFile)+"?_pragma=journal_mode(WAL)")
	if err != nil {
		b.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range size.submissions {
		state := event.Passed
		if i%4 == 0 {
			state = event.Failed
		}
		if _, err := tx.Exec(`INSERT INTO submissions (team_id, sha256, size, filename, uploaded, state, summary) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			i%size.teams+1, fmt.Sprintf("%064x", i), 1000+i, "bot.zip", now, state, ""); err != nil {
			b.Fatal(err)
		}
	}
	kinds := []string{"ladder", "ladder", "ladder", "scrimmage", "validation"}
	ins, err := tx.Prepare(`INSERT INTO games (kind, white_team, black_team, white_submission, black_submission, white_name, black_name,
			white_sha256, black_sha256, dir, winner, reason, plies, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'white', 'checkmate', 40, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	// Ten scrimmages a team, of two games each: the first scrimmage games
	// are theirs, in their directories.
	var scrimmages [][2]int
	for i := range size.games {
		w, bl := i%size.teams+1, (i*7+1)%size.teams+1
		kind, dir := kinds[i%len(kinds)], fmt.Sprintf("games/%d", i)
		if kind == event.ScrimmageGame && len(scrimmages) < 20*size.teams {
			dir = fmt.Sprintf("%s/%d/%d", event.ScrimmagesDir, len(scrimmages)/2+1, i)
			scrimmages = append(scrimmages, [2]int{w, bl})
		}
		if _, err := ins.Exec(kind, w, bl, w, bl, fmt.Sprintf("team %03d", w-1), fmt.Sprintf("team %03d", bl-1), "aa", "bb", dir, now); err != nil {
			b.Fatal(err)
		}
	}
	// Each team's rating after each of its ladder pairs: the ladder's
	// games are three in five, two a pair, two teams a pair.
	pairs := size.games * 3 / 5 / size.teams
	for team := 1; team <= size.teams; team++ {
		for pair := 1; pair <= pairs; pair++ {
			if _, err := tx.Exec(`INSERT INTO rating_history (team_id, pair, submission, rating, deviation, at) VALUES (?, ?, ?, ?, ?, ?)`,
				team, pair, team+pair/200, 1500+float64(pair%300), 50, now); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Written as rows, the points have no kept plots yet: as in an event
	// from before plots were kept, the event's next opening keeps them.
	if _, err := tx.Exec(`DROP TABLE rating_plots`); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(scrimmages); i += 2 {
		sides := scrimmages[i]
		if _, err := tx.Exec(`INSERT INTO scrimmages (team_id, rival_team, submission, rival_submission, state, created, finished) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			sides[0], sides[1], sides[0], sides[1], event.ScrimmageDone, now, now); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return tokens
}

// BenchmarkPagesUnderLoad asks for each page a team opens (and the
// organizer's) of a large event from 100 clients at once over loopback and
// reports each page's p50 and p99 latency and the heap in use; and the
// same of the teams' first asks (the first third of the requests: each
// team's page asked for the first time, drawn anew) and of their asks
// again. Run it with
// -benchtime=3000x (requests per page); ARENA_BENCH_SIZE=large asks of a
// 1,000-team event of 10,000 submissions and 1,000,000 games.
func BenchmarkPagesUnderLoad(b *testing.B) {
	size := benchSizeOf(b)
	s, tokens, admin, games := seedLarge(b, size)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 100}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	// Each page's address for request i of team team ("": the team's
	// token; the organizer's pages are asked with the organizer's).
	pages := []struct {
		name  string
		path  func(i, team int) string
		admin bool
	}{
		{"home", func(int, int) string { return "/" }, false},
		{"team", func(int, int) string { return "/team" }, false},
		{"games", func(i, _ int) string { return fmt.Sprintf("/games?page=%d", 1+i%40) }, false},
		{"games-kind", func(i, _ int) string { return fmt.Sprintf("/games?kind=scrimmage&page=%d", 1+i%8) }, false},
		{"game", func(i, team int) string {
			// A game this team played as white.
			return fmt.Sprintf("/games/%d", int64(team+1)+int64(size.teams*(i%(int(games)/size.teams))))
		}, false},
		{"standings", func(int, int) string { return "/standings" }, false},
		{"api-games", func(i, _ int) string { return fmt.Sprintf("/api/v1/games?page=%d", 1+i%40) }, false},
		{"api-submissions", func(int, int) string { return "/api/v1/submissions" }, false},
		{"admin", func(i, _ int) string { return fmt.Sprintf("/admin?teams=%d", 1+i%((size.teams+99)/100)) }, true},
		{"admin-games", func(i, team int) string { return fmt.Sprintf("/games?team=%d&page=%d", team+1, 1+i%40) }, true},
	}
	for _, page := range pages {
		b.Run(page.name, func(b *testing.B) {
			var mu sync.Mutex
			// Every latency, and those of a team's first ask of the page
			// (request i < teams: a page no one asked for yet, drawn
			// anew) and of its asks again.
			var lat, first, again []time.Duration
			next := make(chan int)
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 100 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						team := i % len(tokens)
						path := page.path(i, team)
						req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
						switch {
						case page.admin:
							req.Header.Set("Authorization", "Bearer "+admin)
						case page.name != "home":
							req.Header.Set("Authorization", "Bearer "+tokens[team])
						}
						start := time.Now()
						res, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, res.Body)
						res.Body.Close()
						d := time.Since(start)
						if res.StatusCode != http.StatusOK {
							b.Errorf("%s: status %d", path, res.StatusCode)
						}
						mu.Lock()
						lat = append(lat, d)
						if i < len(tokens) {
							first = append(first, d)
						} else {
							again = append(again, d)
						}
						mu.Unlock()
					}
				}()
			}
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			b.StopTimer()
			for _, l := range []struct {
				lat  []time.Duration
				name string
			}{{lat, ""}, {first, "first-"}, {again, "again-"}} {
				slices.Sort(l.lat)
				if len(l.lat) > 0 {
					b.ReportMetric(float64(l.lat[len(l.lat)/2].Microseconds())/1000, l.name+"p50-ms")
					b.ReportMetric(float64(l.lat[len(l.lat)*99/100].Microseconds())/1000, l.name+"p99-ms")
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		})
	}
}

// BenchmarkAViewDrawnAnew is the work of one view alone, drawn anew: a
// team's page, and the API's page of 100 games, each op a team's view no
// one asked for yet (past each 1,000 views of the large event, a new
// server over the same event, its kept pages none, outside the timing).
// Run it with ARENA_BENCH_SIZE=large.
func BenchmarkAViewDrawnAnew(b *testing.B) {
	s, tokens, admin, _ := seedLarge(b, benchSizeOf(b))
	for _, page := range []struct {
		name, path string
		admin      bool
	}{{"team", "/team", false}, {"api-games", "/api/v1/games", false}, {"admin", "/admin", true}} {
		b.Run(page.name, func(b *testing.B) {
			h := New(s.Store, s.Config, s.Log).Handler()
			i := 0
			for b.Loop() {
				if i > 0 && (i%len(tokens) == 0 || page.admin) {
					b.StopTimer()
					h = New(s.Store, s.Config, s.Log).Handler()
					b.StartTimer()
				}
				req := httptest.NewRequest(http.MethodGet, page.path, nil)
				token := tokens[i%len(tokens)]
				if page.admin {
					token = admin
				}
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: status %d", page.path, rec.Code)
				}
				i++
			}
		})
	}
}

// BenchmarkAMetricsScrape is one scrape of /metrics (the gauges read from
// the event's database at each: the queues, the final, its size), of the
// event ARENA_BENCH_SIZE names (large: 1,000 teams). Target: under 10 ms.
func BenchmarkAMetricsScrape(b *testing.B) {
	s, _, _, _ := seedLarge(b, benchSizeOf(b))
	m := metrics.NewEvent(s.Store.Gauges, nil)
	h := m.Handler()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "arena_submissions") {
			b.Fatalf("a scrape: status %d", rec.Code)
		}
	}
}
