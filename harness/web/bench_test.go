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
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
)

// seedLarge makes an event of 300 teams, 3,000 submissions and 100,000
// games (rows only: the game pages read no transcript) and returns a server
// of it and a token of each team.
func seedLarge(b *testing.B) (*Server, []string, int64) {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, event.ConfigFile), []byte("game = \"codeclash\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		b.Fatal(err)
	}
	st, err := event.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var tokens []string
	for i := range 300 {
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
	for i := range 3000 {
		state := event.Passed
		if i%4 == 0 {
			state = event.Failed
		}
		if _, err := tx.Exec(`INSERT INTO submissions (team_id, sha256, size, filename, uploaded, state, summary) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			i%300+1, fmt.Sprintf("%064x", i), 1000+i, "bot.zip", now, state, ""); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100000 {
		w, bl := i%300+1, (i*7+1)%300+1
		if _, err := tx.Exec(`INSERT INTO games (kind, white_team, black_team, white_submission, black_submission, white_name, black_name,
			white_sha256, black_sha256, dir, winner, reason, plies, finished) VALUES ('ladder', ?, ?, ?, ?, ?, ?, ?, ?, ?, 'white', 'checkmate', 40, ?)`,
			w, bl, w, bl, fmt.Sprintf("team %03d", w-1), fmt.Sprintf("team %03d", bl-1), "aa", "bb", fmt.Sprintf("games/%d", i), now); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	st, err = event.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return New(st, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))), tokens, 100000
}

// BenchmarkPagesUnderLoad asks for the home page, a team page and a game
// page of a large event from 100 clients at once over loopback and reports
// each page's p50 and p99 latency and the heap in use. Run it with
// -benchtime=3000x (requests per page).
func BenchmarkPagesUnderLoad(b *testing.B) {
	s, tokens, games := seedLarge(b)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 100}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	for _, page := range []string{"home", "team", "game"} {
		b.Run(page, func(b *testing.B) {
			var mu sync.Mutex
			var lat []time.Duration
			next := make(chan int)
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 100 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						team := i % len(tokens)
						path := "/"
						switch page {
						case "team":
							path = "/team"
						case "game":
							// A game this team played as white.
							path = fmt.Sprintf("/games/%d", int64(team+1)+int64(300*(i%(int(games)/300))))
						}
						req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
						if page != "home" {
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
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		})
	}
}
