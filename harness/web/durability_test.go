package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// durable is what the server acknowledged, to be found after every kill.
type durable struct {
	mu          sync.Mutex
	submissions map[int64]string // id -> its file's SHA-256
	scrimmages  map[int64]bool
	disputes    map[int64]string // id -> message
	answers     map[int64]string // dispute id -> answer
	renames     []string         // Delta's names, in the order sent
	renamed     int              // how many of them were acknowledged, in order
	final       bool             // the final's start was acknowledged
	writes      int
}

// ack records one acknowledged write.
func (d *durable) ack(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
	d.writes++
}

// send sends one request and returns its status and body; err is a request
// that got no answer (the server was killed under it): not acknowledged.
func send(ctx context.Context, method, url, token, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return res.StatusCode, data, err
}

// TestAcknowledgedWritesSurviveSIGKILLWithReadersBeside: `arena serve` is
// killed with SIGKILL at random moments, again and again, while teams
// upload, challenge and dispute, the organizer renames a team, answers
// disputes and starts the final, and other processes read the event's
// database through SQLite and take backups beside it. After each kill
// every write the server acknowledged is in the database; while it ran
// its journal was never unlinked under it and it never lost its lock;
// after each restart no page answers 5xx; at the end the ladder and the
// final resumed with nothing played twice, and the final played each game
// of its schedule once.
func TestAcknowledgedWritesSurviveSIGKILLWithReadersBeside(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sqlite3 is not installed: scripts/test.sh installs it")
		}
		t.Skip("sqlite3 is not installed")
	}
	kills := 20
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 51))
	var made []event.NewTeam
	e := writeEvent(t, `game = "codeclash"
[quotas]
uploads_per_hour = 100000
pending_validations = 100000
scrimmages_per_hour = 100000
pending_scrimmages = 100000
[ladder]
share = 1.0
`, passedBots(t, &made, "./examples/greedy", "./examples/random", "./examples/random", "./examples/greedy"), "Alpha", "Beta", "Gamma", "Delta")
	teams := map[string]event.NewTeam{}
	for _, tm := range made {
		teams[tm.Name] = tm
	}
	tokens := map[string]string{"Alpha": e.a.Token, "Beta": e.b.Token}
	arena := gobuild.MustStatic(t, "./cmd/arena")
	dbPath := filepath.Join(e.dir, event.DBFile)
	broken := []byte("def main(:\n    pass\n")

	d := &durable{submissions: map[int64]string{}, scrimmages: map[int64]bool{}, disputes: map[int64]string{}, answers: map[int64]string{}}
	var backups int
	for round := range kills {
		srv := startServe(t, e.dir, "--sandbox", "local", "--games", "2", "--validators", "1")
		pid := srv.pid()
		base := srv.URL
		checkPages(t, base, e.admin, e.a.Token, round)

		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var faults []string
		var faultsMu sync.Mutex
		fault := func(f string, args ...any) {
			faultsMu.Lock()
			faults = append(faults, fmt.Sprintf("round %d: ", round)+fmt.Sprintf(f, args...))
			faultsMu.Unlock()
		}
		loop := func(every time.Duration, f func(k int)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ctx.Err() == nil; k++ {
					f(k)
					select {
					case <-ctx.Done():
					case <-time.After(every):
					}
				}
			}()
		}
		// Teams upload: a submission acknowledged (201) is one kept.
		for _, name := range []string{"Alpha", "Beta"} {
			loop(60*time.Millisecond, func(k int) {
				var body bytes.Buffer
				mw := multipart.NewWriter(&body)
				fw, _ := mw.CreateFormFile("file", fmt.Sprintf("bot %s r%d.%d.py", name, round, k))
				fw.Write(append(broken, fmt.Sprintf("# %s %d %d\r\n", name, round, k)...))
				mw.Close()
				code, data, err := send(ctx, "POST", base+"/api/v1/submissions", tokens[name], mw.FormDataContentType(), body.Bytes())
				if err != nil {
					return
				}
				if code != http.StatusCreated {
					if round < kills/2 || code >= 500 { // refused once the final closed uploads
						fault("%s's upload: %d %s", name, code, data)
					}
					return
				}
				var out struct{ Submission event.Submission }
				if err := json.Unmarshal(data, &out); err != nil {
					fault("%s's upload answered %s: %v", name, data, err)
					return
				}
				d.ack(func() { d.submissions[out.Submission.ID] = out.Submission.SHA256 })
			})
		}
		// Alpha challenges Beta, now and then.
		loop(400*time.Millisecond, func(int) {
			code, data, err := send(ctx, "POST", base+"/api/v1/scrimmages", e.a.Token, "application/json", fmt.Appendf(nil, `{"rival": %d}`, e.b.ID))
			if err != nil {
				return
			}
			var out struct{ Scrimmage event.Scrimmage }
			if code != http.StatusCreated || json.Unmarshal(data, &out) != nil {
				if !bytes.Contains(data, []byte(`"refused"`)) { // after the close
					fault("Alpha's challenge: %d %s", code, data)
				}
				return
			}
			d.ack(func() { d.scrimmages[out.Scrimmage.ID] = true })
		})
		// Beta disputes its games.
		loop(150*time.Millisecond, func(k int) {
			code, data, err := send(ctx, "GET", base+"/api/v1/games?page=1", e.b.Token, "", nil)
			if err != nil || code != http.StatusOK {
				return
			}
			var list struct{ Games []event.Game }
			if err := json.Unmarshal(data, &list); err != nil || len(list.Games) == 0 {
				return
			}
			g := list.Games[rand.IntN(len(list.Games))]
			msg := fmt.Sprintf("Turn %d of round %d's look: «why?» & <why not>", k, round)
			body, _ := json.Marshal(map[string]string{"message": msg})
			code, data, err = send(ctx, "POST", fmt.Sprintf("%s/api/v1/games/%d/disputes", base, g.ID), e.b.Token, "application/json", body)
			if err != nil || code == http.StatusTooManyRequests {
				return // five open already
			}
			var out struct{ Dispute event.Dispute }
			if code != http.StatusCreated || json.Unmarshal(data, &out) != nil {
				fault("Beta's dispute: %d %s", code, data)
				return
			}
			d.ack(func() { d.disputes[out.Dispute.ID] = msg })
		})
		// The organizer renames Delta, one name after another, and answers
		// the open disputes.
		loop(100*time.Millisecond, func(k int) {
			name := fmt.Sprintf("Delta r%d.%d (O'Brien & co)", round, k)
			d.mu.Lock()
			d.renames = append(d.renames, name)
			n := len(d.renames)
			d.mu.Unlock()
			body, _ := json.Marshal(map[string]string{"name": name})
			code, data, err := send(ctx, "POST", fmt.Sprintf("%s/api/v1/admin/teams/%d/rename", base, teams["Delta"].ID), e.admin, "application/json", body)
			if err != nil {
				return
			}
			if code != http.StatusOK {
				fault("rename: %d %s", code, data)
				return
			}
			d.ack(func() { d.renamed = n })
		})
		loop(200*time.Millisecond, func(k int) {
			code, data, err := send(ctx, "GET", base+"/api/v1/disputes", e.admin, "", nil)
			if err != nil || code != http.StatusOK {
				return
			}
			var list struct{ Disputes []event.Dispute }
			if json.Unmarshal(data, &list) != nil {
				return
			}
			for _, dp := range list.Disputes {
				if dp.State != "open" {
					continue
				}
				answer := fmt.Sprintf("Answered in round %d, try %d: the rules say so.", round, k)
				body, _ := json.Marshal(map[string]string{"answer": answer})
				code, data, err := send(ctx, "POST", fmt.Sprintf("%s/api/v1/admin/disputes/%d/answer", base, dp.ID), e.admin, "application/json", body)
				if err != nil {
					return
				}
				if code != http.StatusOK {
					fault("answer %d: %d %s", dp.ID, code, data)
					return
				}
				d.ack(func() { d.answers[dp.ID] = answer })
			}
		})
		// The final starts halfway through the kills, asked again after each
		// kill until its start is acknowledged: a loaded host may be killed
		// before it answers. A start kept but not answered is resumed by the
		// next server, which then says the final is already playing.
		d.mu.Lock()
		askFinal := round >= kills/2 && !d.final
		d.mu.Unlock()
		if askFinal {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, data, err := send(ctx, "POST", base+"/api/v1/admin/final", e.admin, "application/json", []byte(`{"games_per_pair": 2, "concurrency": 2}`))
				switch {
				case err != nil:
				case code == http.StatusOK, code == http.StatusConflict && strings.Contains(string(data), "already playing"):
					d.ack(func() { d.final = true })
				default:
					fault("start the final: %d %s", code, data)
				}
			}()
		}
		// Other processes beside it, as an organizer runs them: sqlite3
		// reading the database, a program of arena's reading it through
		// SQLite (this test's process), and a backup (arena event backup).
		loop(30*time.Millisecond, func(k int) {
			if k%2 == 0 {
				out, err := exec.CommandContext(ctx, "sqlite3", "-cmd", ".timeout 10000", dbPath, "SELECT count(*) FROM submissions").CombinedOutput()
				if err != nil && ctx.Err() == nil {
					fault("sqlite3 beside: %v\n%s", err, out)
				}
				return
			}
			db, err := sqlitedb.Open(dbPath, "_pragma=busy_timeout(10000)")
			if err != nil {
				fault("a reader beside: %v", err)
				return
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM submissions`).Scan(&n); err != nil && ctx.Err() == nil {
				fault("a reader beside: %v", err)
			}
			if err := db.Close(); err != nil {
				fault("a reader beside closed: %v", err)
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(t.TempDir(), "backup")
			if msg, err := exec.CommandContext(ctx, arena, "event", "backup", e.dir, out).CombinedOutput(); err != nil && ctx.Err() == nil {
				fault("a backup beside: %v\n%s", err, msg)
			} else if err == nil {
				d.ack(func() { backups++ })
			}
		}()
		// The server's journal stays linked and its lock held while it runs.
		watch, stopWatch := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for watch.Err() == nil {
				if held, err := sqlitedb.Held(dbPath, pid); err == nil && !held {
					fault("the server lost its lock on %s", event.DBFile)
					return
				}
				links, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
				for _, l := range links {
					to, _ := os.Readlink(l)
					if strings.Contains(to, event.DBFile) && strings.HasSuffix(to, "(deleted)") {
						fault("the server writes to %s", to)
						return
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()

		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		stopWatch()
		<-watched
		srv.Kill()
		stop()
		wg.Wait()
		for _, f := range faults {
			t.Error(f)
		}
		if t.Failed() {
			t.Fatalf("round %d; the server's log:\n%s", round, srv.Logs())
		}
		checkDurable(t, dbPath, d, teams["Delta"].ID, round)
	}

	// A last run: the final and the ladder resume and the final ends.
	srv := startServe(t, e.dir, "--sandbox", "local", "--games", "2", "--validators", "1")
	checkPages(t, srv.URL, e.admin, e.a.Token, kills)
	var b event.Board
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		code, data, err := send(context.Background(), "GET", srv.URL+"/api/v1/standings", e.admin, "", nil)
		if err != nil || code != http.StatusOK || json.Unmarshal(data, &b) != nil {
			t.Fatalf("standings: %d %v %s", code, err, data)
		}
		if !d.final || !b.Run.Finished.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the final did not end in 3 minutes after the last kill: %+v; the server's log:\n%s", b.Games, srv.Logs())
		}
	}
	srv.Stop(t)
	checkDurable(t, dbPath, d, teams["Delta"].ID, kills)
	if d.final && (b.Run.Error != "" || b.Games["done"] != b.Games["total"] || b.Games["total"] == 0) {
		t.Errorf("the final ended with %+v, %q; want every game of its schedule played", b.Games, b.Run.Error)
	}
	checkPlayedOnce(t, e.dir)
	t.Logf("%d kills; %d acknowledged writes (%d uploads, %d challenges, %d disputes, %d answers, %d renames, final %v); %d backups beside",
		kills, d.writes, len(d.submissions), len(d.scrimmages), len(d.disputes), len(d.answers), d.renamed, d.final, backups)
	if len(d.submissions) < kills || d.renamed < kills || !d.final {
		t.Errorf("too few writes were acknowledged to prove anything: %d uploads, %d renames, final %v", len(d.submissions), d.renamed, d.final)
	}
}

// checkPages asks for the pages every kind of visitor sees: none answers
// 5xx.
func checkPages(t *testing.T, base, admin, team string, round int) {
	t.Helper()
	for _, p := range []struct{ path, token string }{
		{"/", ""}, {"/standings", ""}, {"/api/v1/standings", ""}, {"/api/v1/event", ""},
		{"/team", team}, {"/games", team}, {"/api/v1/submissions", team}, {"/api/v1/games", team}, {"/api/v1/disputes", team},
		{"/admin", admin}, {"/api/v1/admin/teams", admin}, {"/api/v1/admin/audit", admin}, {"/api/v1/admin/queue", admin},
	} {
		code, data, err := send(context.Background(), "GET", base+p.path, p.token, "", nil)
		if err != nil || code >= 500 {
			t.Errorf("after restart %d, %s: %d %v %.300s", round, p.path, code, err, data)
		}
	}
}

// checkDurable reads the database (through SQLite, from this process) and
// finds every acknowledged write in it.
func checkDurable(t *testing.T, path string, d *durable, delta int64, round int) {
	t.Helper()
	db, err := sqlitedb.Open(path, "_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	d.mu.Lock()
	defer d.mu.Unlock()
	lost := 0
	for id, sha := range d.submissions {
		var got string
		if err := db.QueryRow(`SELECT sha256 FROM submissions WHERE id = ?`, id).Scan(&got); err != nil || got != sha {
			t.Errorf("after kill %d: submission %d, acknowledged, reads %q (%v)", round, id, got, err)
			lost++
		}
	}
	for id := range d.scrimmages {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM scrimmages WHERE id = ?`, id).Scan(&n); err != nil || n != 1 {
			t.Errorf("after kill %d: scrimmage %d, acknowledged, is not kept (%v)", round, id, err)
			lost++
		}
	}
	for id, msg := range d.disputes {
		var got string
		if err := db.QueryRow(`SELECT message FROM disputes WHERE id = ?`, id).Scan(&got); err != nil || got != msg {
			t.Errorf("after kill %d: dispute %d, acknowledged, reads %q (%v)", round, id, got, err)
			lost++
		}
	}
	for id, answer := range d.answers {
		var got string
		if err := db.QueryRow(`SELECT answer FROM disputes WHERE id = ?`, id).Scan(&got); err != nil || got != answer {
			t.Errorf("after kill %d: dispute %d's answer, acknowledged, reads %q (%v)", round, id, got, err)
			lost++
		}
	}
	if d.renamed > 0 {
		var name string
		if err := db.QueryRow(`SELECT name FROM teams WHERE id = ?`, delta).Scan(&name); err != nil {
			t.Fatal(err)
		}
		// The last name acknowledged, or one sent after it whose answer the
		// kill cut.
		if i := indexOf(d.renames, name); i < d.renamed-1 {
			t.Errorf("after kill %d: Delta is named %q, but %q was acknowledged after it", round, name, d.renames[d.renamed-1])
			lost++
		}
	}
	if d.final {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM final_run`).Scan(&n); err != nil || n != 1 {
			t.Errorf("after kill %d: the final's start, acknowledged, is not kept (%v)", round, err)
		}
	}
	if lost > 0 {
		t.Fatalf("after kill %d: %d acknowledged writes lost", round, lost)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// checkPlayedOnce: no game is recorded twice, and every ladder pair's and
// scrimmage's directory has its row (the database is the truth: a number
// is never given twice).
func checkPlayedOnce(t *testing.T, dir string) {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(dir, event.DBFile), "_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT dir, count(*) FROM games GROUP BY dir HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d string
		var n int
		if err := rows.Scan(&d, &n); err != nil {
			t.Fatal(err)
		}
		t.Errorf("the game in %s is recorded %d times", d, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []struct{ dir, table string }{{event.LadderDir, "ladder_pairs"}, {event.ScrimmagesDir, "scrimmages"}} {
		entries, err := os.ReadDir(filepath.Join(dir, kind.dir))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, en := range entries {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM `+kind.table+` WHERE id = ?`, en.Name()).Scan(&n); err != nil || n != 1 {
				t.Errorf("%s/%s has no row in %s (%v)", kind.dir, en.Name(), kind.table, err)
			}
		}
	}
}
