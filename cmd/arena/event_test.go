//go:build !team

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/api"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/server"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox/docker"
)

// These tests run arena in-process and share slog's default logger: none of
// them is parallel.

// newEvent is a directory that arena event init made.
func newEvent(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "event")
	if code, out, errs := runArena("event", "init", dir, "--game", "codeclash"); code != 0 {
		t.Fatalf("event init: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	return dir
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openStore(t *testing.T, dir string) *event.Store {
	t.Helper()
	st, err := event.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

// tokenRow is a row of the import's table: the team's name, the name its
// bot plays as, its token.
var tokenRow = regexp.MustCompile(`(?m)^(\S.*?)\s{2,}(\S+)\s{2,}([0-9a-f]{64})$`)

// printedTokens are the NAME and TOKEN rows teams import printed.
func printedTokens(out string) map[string]string {
	tokens := map[string]string{}
	for _, m := range tokenRow.FindAllStringSubmatch(out, -1) {
		tokens[m[1]] = m[3]
	}
	return tokens
}

func TestEventInitWritesAConfigAndNeverOverwritesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "event")
	code, out, errs := runArena("event", "init", dir, "--game", "chess")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		t.Fatalf("the written event.toml does not load: %v", err)
	}
	if cfg.Game != "chess" {
		t.Errorf("game %q, want chess", cfg.Game)
	}
	// The log's name is fixed now, from the directory's.
	if origin, err := os.ReadFile(filepath.Join(dir, event.LogOriginFile)); err != nil || string(origin) != "arena/event\n" {
		t.Errorf("the log's origin: %q, %v; want arena/event", origin, err)
	}
	for _, next := range []string{"arena event teams import " + dir, "arena event admin-token " + dir, "arena serve --event " + dir} {
		if !strings.Contains(out, next) {
			t.Errorf("the next steps do not say %q:\n%s", next, out)
		}
	}
	path := filepath.Join(dir, event.ConfigFile)
	writeFile(t, path, "game = \"checkers\"\n")
	code, out, errs = runArena("event", "init", dir)
	if code != exitUsage || !strings.Contains(errs, "exists") || !strings.Contains(errs, "remove it first") {
		t.Errorf("a second init: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if text, _ := os.ReadFile(path); string(text) != "game = \"checkers\"\n" {
		t.Errorf("a second init changed event.toml to %q", text)
	}
	if code, _, errs := runArena("event", "init", filepath.Join(t.TempDir(), "e"), "--game", "go"); code != exitUsage || !strings.Contains(errs, "--game") {
		t.Errorf("an unknown game: exit %d, stderr %s", code, errs)
	}
}

func TestEventTeamsImportPrintsEachNewTeamsTokenOnce(t *testing.T) {
	dir := newEvent(t)
	csv := writeFile(t, filepath.Join(t.TempDir(), "teams.csv"), "name,members,contact\nRooks,Ann and Bo,rooks@example.org\nKnights of Ni\n")
	code, out, errs := runArena("event", "teams", "import", dir, csv)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	tokens := printedTokens(out)
	if len(tokens) != 2 || tokens["Rooks"] == "" || tokens["Knights of Ni"] == "" {
		t.Fatalf("printed tokens %v, want one for each of the 2 teams:\n%s", tokens, out)
	}
	if !regexp.MustCompile(`(?m)^Knights of Ni\s+Knights-of-Ni\s`).MatchString(out) {
		t.Errorf("the table does not say Knights of Ni plays as Knights-of-Ni:\n%s", out)
	}
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "PLAYS AS") || !strings.Contains(out, "TOKEN") || !strings.Contains(out, "only this once") {
		t.Errorf("the table has no header or does not say the tokens are shown once:\n%s", out)
	}
	st := openStore(t, dir)
	ctx := context.Background()
	for name, token := range tokens {
		team, err := st.TeamByName(ctx, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := st.Authenticate(ctx, token)
		if err != nil || p.Team != team.ID || p.Admin {
			t.Errorf("%s's printed token authenticates as %+v (%v), want team %d", name, p, err, team.ID)
		}
	}

	more := writeFile(t, filepath.Join(t.TempDir(), "more.csv"), "Rooks\nBishops\n")
	code, out, errs = runArena("event", "teams", "import", dir, more)
	if code != 0 {
		t.Fatalf("the second import: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	again := printedTokens(out)
	if len(again) != 1 || again["Bishops"] == "" {
		t.Errorf("the second import printed tokens %v, want Bishops' only:\n%s", again, out)
	}
	if !strings.Contains(out, "skipped: Rooks") {
		t.Errorf("the second import does not say Rooks was skipped:\n%s", out)
	}
	if p, err := st.Authenticate(ctx, tokens["Rooks"]); err != nil || p.Team == 0 {
		t.Errorf("a skipped team's token changed: %+v, %v", p, err)
	}

	bad := writeFile(t, filepath.Join(t.TempDir(), "bad.csv"), "Pawns\nx,y,z,w\n")
	code, out, errs = runArena("event", "teams", "import", dir, bad)
	if code != exitUsage || !strings.Contains(errs, "line 2") || printedTokens(out)["Pawns"] == "" {
		t.Errorf("a bad line: exit %d, want 2 with its line, and the team before it printed\nstdout: %s\nstderr: %s", code, out, errs)
	}

	code, _, errs = runArena("event", "teams", "import", t.TempDir(), csv)
	if code != exitUsage || !strings.Contains(errs, "is not an event") {
		t.Errorf("a directory without event.toml: exit %d, stderr %s", code, errs)
	}
}

func TestEventAdminTokenReplacesTheOneBefore(t *testing.T) {
	dir := newEvent(t)
	var tokens []string
	for range 2 {
		code, out, errs := runArena("event", "admin-token", dir)
		if code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		if !strings.Contains(errs, "only this once") || !strings.Contains(errs, "no longer works") {
			t.Errorf("admin-token does not say the token is shown once and the one before stopped working: %s", errs)
		}
		tokens = append(tokens, strings.TrimSpace(out))
	}
	st := openStore(t, dir)
	ctx := context.Background()
	if p, err := st.Authenticate(ctx, tokens[1]); err != nil || !p.Admin {
		t.Errorf("the printed token authenticates as %+v (%v), want the organizer", p, err)
	}
	if _, err := st.Authenticate(ctx, tokens[0]); !errors.Is(err, event.ErrBadToken) {
		t.Errorf("the token before still works: %v", err)
	}
}

func TestEventBackupIsAnEventWithTheTeams(t *testing.T) {
	dir := newEvent(t)
	csv := writeFile(t, filepath.Join(t.TempDir(), "teams.csv"), "Rooks\nBishops\n")
	if code, out, errs := runArena("event", "teams", "import", dir, csv); code != 0 {
		t.Fatalf("import: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	out := filepath.Join(t.TempDir(), "copy")
	code, stdout, errs := runArena("event", "backup", dir, out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, errs)
	}
	for _, name := range []string{event.DBFile, event.ConfigFile} {
		if !strings.Contains(stdout, name) {
			t.Errorf("the backup does not say it copied %s:\n%s", name, stdout)
		}
	}
	if _, err := event.LoadConfig(out); err != nil {
		t.Errorf("the copy's event.toml: %v", err)
	}
	cp := openStore(t, out)
	if cp.LogOrigin() != "arena/event" {
		t.Errorf("the copy's log is %q, want the event's, arena/event", cp.LogOrigin())
	}
	teams, err := cp.Teams(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, team := range teams {
		names = append(names, team.Name)
	}
	if strings.Join(names, ",") != "Bishops,Rooks" {
		t.Errorf("the copy holds teams %v, want Bishops and Rooks", names)
	}
	if code, _, errs := runArena("event", "backup", dir, out); code != exitUsage || !strings.Contains(errs, "exists") {
		t.Errorf("a backup onto an existing directory: exit %d, stderr %s", code, errs)
	}
}

func TestServeWiring(t *testing.T) {
	dir := newEvent(t)
	var got server.Options
	serveEvent = func(_ context.Context, o server.Options) error { got = o; return nil }
	t.Cleanup(func() { serveEvent = server.Serve })
	code, out, errs := runInProcess("--docker-host", "tcp://engine:2376", "--docker-tls-cert", "engine.pem", "--docker-tls-key", "engine.key",
		"serve", "--event", dir, "--http", "127.0.0.1:0", "--tls-cert", "server.pem", "--tls-key", "server.key", "--trust-proxy", "1",
		"--validators", "3", "--sandbox", "docker", "--image", "img:1", "--build-cache", "none")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if got.EventDir != dir || got.Addr != "127.0.0.1:0" || got.TLSCert != "server.pem" || got.TLSKey != "server.key" ||
		got.TrustProxy != "1" || got.Validators != 3 || got.BuildCache != "" || got.Log == nil || got.Ready == nil {
		t.Errorf("options %+v", got)
	}
	if s, engine := got.Sandbox, got.Sandbox.Backend.(docker.Conn); s.Kind != "docker" || s.Image != "img:1" || engine.Host != "tcp://engine:2376" ||
		engine.Cert != "engine.pem" || engine.Key != "engine.key" {
		t.Errorf("sandbox %+v: want the engine of the global flags", s)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no event", []string{"serve"}, "--event is required"},
		{"not an event", []string{"serve", "--event", t.TempDir()}, "is not an event"},
		{"a certificate without its key", []string{"serve", "--event", dir, "--tls-cert", "c.pem"}, "--tls-cert and --tls-key"},
		{"no validators", []string{"serve", "--event", dir, "--validators", "0"}, "--validators"},
		{"an argument", []string{"serve", "--event", dir, "extra"}, "no arguments"},
		{"a proxy that is no address", []string{"serve", "--event", dir, "--trust-proxy", "nginx"}, "--trust-proxy"},
	} {
		if code, _, errs := runInProcess(c.args...); code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 saying %q", c.name, code, errs, c.want)
		}
	}
}

func TestServeRefusesABadConfigWithItsLine(t *testing.T) {
	dir := newEvent(t)
	writeFile(t, filepath.Join(dir, event.ConfigFile), "game = \"codeclash\"\n\n[limits]\nmemory = \"a lot\"\n")
	code, out, errs := runArena("serve", "--event", dir, "--sandbox", "local")
	want := filepath.Join(dir, event.ConfigFile) + ":4: "
	if code != exitUsage || !strings.Contains(errs, want) || !strings.Contains(errs, "want a size") {
		t.Errorf("exit %d, want 2 with %q and the reason\nstdout: %s\nstderr: %s", code, want, out, errs)
	}
}

// fakeEvent answers the API of an event server for one team: the upload,
// then each GET of the submission gives the next of states.
type fakeEvent struct {
	mu       sync.Mutex
	states   []api.State
	summary  string
	uploaded string // the name of the uploaded file
	auth     string
}

func (f *fakeEvent) handler() http.Handler {
	mux := http.NewServeMux()
	sub := func() event.Submission {
		return event.Submission{ID: 7, Team: 1, SHA256: strings.Repeat("ab", 32), Size: 42, Filename: f.uploaded,
			State: f.states[0], Summary: f.summary, Active: true}
	}
	mux.HandleFunc("POST /api/v1/submissions", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.auth = r.Header.Get("Authorization")
		file, h, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		file.Close()
		f.uploaded = h.Filename
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"submission": sub()})
	})
	mux.HandleFunc("GET /api/v1/submissions/7", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		s := sub()
		if len(f.states) > 1 {
			f.states = f.states[1:]
		}
		json.NewEncoder(w).Encode(map[string]any{"submission": s, "report": nil})
	})
	mux.HandleFunc("GET /api/v1/submissions/7/report.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "REPORT OF SUBMISSION 7")
	})
	return mux
}

func TestSubmitExitsByTheValidation(t *testing.T) {
	bot := writeFile(t, filepath.Join(t.TempDir(), "bot.py"), "print('hi')\n")
	tokenFile := writeFile(t, filepath.Join(t.TempDir(), "token"), "  secret-token\n")
	for _, c := range []struct {
		final          api.State
		summary        string
		code           int
		stdout, stderr string
	}{
		{event.Passed, "", 0, "REPORT OF SUBMISSION 7", "it now plays"},
		{event.Failed, "answers: illegal move", exitFailed, "REPORT OF SUBMISSION 7", "answers: illegal move"},
		{event.Errored, "the validation could not finish: engine gone", exitUsage, "", "engine gone"},
	} {
		t.Run(string(c.final), func(t *testing.T) {
			f := &fakeEvent{states: []api.State{event.Queued, event.Building, c.final}, summary: c.summary}
			srv := httptest.NewServer(f.handler())
			defer srv.Close()
			start := time.Now()
			code, out, errs := runArena("submit", "--server", srv.URL, "--token-file", tokenFile, bot)
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d, want %d with %q on stdout and %q on stderr\nstdout: %s\nstderr: %s", code, c.code, c.stdout, c.stderr, out, errs)
			}
			if !strings.Contains(errs, "submission 7: building") {
				t.Errorf("the progress does not show the states:\n%s", errs)
			}
			f.mu.Lock()
			if f.auth != "Bearer secret-token" || f.uploaded != "bot.py" {
				t.Errorf("uploaded %q with %q", f.uploaded, f.auth)
			}
			f.mu.Unlock()
			if time.Since(start) > 10*time.Second {
				t.Errorf("submit took %s", time.Since(start))
			}
		})
	}

	f := &fakeEvent{states: []api.State{event.Queued}}
	srv := httptest.NewServer(f.handler())
	defer srv.Close()
	code, out, errs := runArena("submit", "--no-wait", "--server", srv.URL, "--token-file", tokenFile, bot)
	if code != 0 || !regexp.MustCompile(`(?m)^id\s+7$`).MatchString(out) || !strings.Contains(out, strings.Repeat("ab", 32)) ||
		!regexp.MustCompile(`(?m)^state\s+queued$`).MatchString(out) {
		t.Errorf("--no-wait: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}

	empty := writeFile(t, filepath.Join(t.TempDir(), "empty"), " \n")
	if code, _, errs := runArena("submit", "--server", srv.URL, "--token-file", empty, bot); code != exitUsage || !strings.Contains(errs, "is empty") {
		t.Errorf("an empty token file: exit %d, stderr %s", code, errs)
	}
	if code, _, errs := runArena("submit", "--server", "arena.example.org", "--token-file", tokenFile, bot); code != exitUsage || !strings.Contains(errs, "--server") {
		t.Errorf("a server without a scheme: exit %d, stderr %s", code, errs)
	}
}

func TestSubmitSaysTheServersReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error": {"code": "quota", "message": "12 uploads in the last hour"}}`)
	}))
	defer srv.Close()
	bot := writeFile(t, filepath.Join(t.TempDir(), "bot.py"), "print('hi')\n")
	tokenFile := writeFile(t, filepath.Join(t.TempDir(), "token"), "t")
	code, out, errs := runArena("submit", "--server", srv.URL, "--token-file", tokenFile, bot)
	if code != exitUsage || !strings.Contains(errs, "12 uploads in the last hour") {
		t.Errorf("exit %d, want 2 with the server's message\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

func TestEventLadderPrintsTheRatedTeams(t *testing.T) {
	dir := newEvent(t)
	st := openStore(t, dir)
	ctx := context.Background()
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A team's bot plays under a name made of its team's: the table gives
	// both, so that "C++ Beta" is not read as its bot "C-Beta".
	for _, name := range []string{"Alpha", "C++ Beta"} {
		team, err := st.AddTeam(ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		sub, err := st.AddSubmission(ctx, cfg, team.ID, "bot.py", strings.NewReader("print('"+name+"')\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := st.LadderEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := st.StartLadderPair(ctx, entries[0], entries[1], "")
	if err != nil {
		t.Fatal(err)
	}
	// Beta wins both games.
	if _, err := st.FinishLadderPair(ctx, pair, []event.Game{{White: pair.A, Black: pair.B, Winner: "black"}, {White: pair.B, Black: pair.A, Winner: "white"}}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runArena("event", "ladder", dir)
	if code != 0 || !regexp.MustCompile(`(?m)^1\s+C\+\+ Beta\s+C-Beta\s+1\d\d\d ± \d+\s+2\s+#2 `).MatchString(out) || !strings.Contains(out, "Alpha") {
		t.Errorf("event ladder: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runArena("event", "ladder", dir, "--json")
	var table []event.Standing
	if err := json.Unmarshal([]byte(out), &table); code != 0 || err != nil || len(table) != 2 || table[0].Name != "C++ Beta" || table[0].Bot != "C-Beta" || table[0].Games != 2 {
		t.Errorf("event ladder --json: exit %d, %v\n%s", code, err, out)
	}
}

// TestTheFinalIsTheTournamentOfThePinnedSubmissions: closing pins each
// team's active submission and stops uploads; the final played from them
// has the standings arena tournament gives the same bots with the same seed.
func TestTheFinalIsTheTournamentOfThePinnedSubmissions(t *testing.T) {
	dir := newEvent(t)
	st := openStore(t, dir)
	ctx := context.Background()
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for name, pkg := range map[string]string{"Alpha": "./examples/random", "Beta": "./examples/greedy", "Gamma": "./examples/random"} {
		data, err := os.ReadFile(gobuild.MustStatic(t, pkg))
		if err != nil {
			t.Fatal(err)
		}
		team, err := st.AddTeam(ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		sub, err := st.AddSubmission(ctx, cfg, team.ID, "bot", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
			t.Fatal(err)
		}
		args = append(args, name+"="+st.Path(sub))
	}
	code, out, errs := runArena("event", "close", dir)
	if code != 0 || strings.Count(out, "#") != 3 {
		t.Fatalf("event close: exit %d\n%s%s", code, out, errs)
	}
	if _, err := st.AddSubmission(ctx, cfg, 1, "late.py", strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("an upload after closing: %v", err)
	}
	if code, out, errs := runArena("event", "final", dir, "--sandbox", "local", "--seed", "5"); code != 0 {
		t.Fatalf("event final: exit %d\n%s%s", code, out, errs)
	}
	other := filepath.Join(t.TempDir(), "cup")
	if code, out, errs := runArena(append([]string{"tournament", "--sandbox", "local", "--seed", "5", "--out", other}, args...)...); code != 0 {
		t.Fatalf("tournament: exit %d\n%s%s", code, out, errs)
	}
	standings := func(d string) []map[string]any {
		code, out, errs := runArena("standings", "--json", d)
		if code != 0 {
			t.Fatalf("standings %s: exit %d %s", d, code, errs)
		}
		var v struct {
			Standings []map[string]any `json:"standings"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Standings) != 3 {
			t.Fatalf("standings %s: %v\n%s", d, err, out)
		}
		return v.Standings
	}
	// Equal row by row, field by field; a computed Elo may differ in its
	// last bits; the final names each bot's team, a tournament of bots
	// alone does not.
	final, cup := standings(filepath.Join(dir, event.FinalDir)), standings(other)
	for i := range final {
		if final[i]["team"] == nil {
			t.Errorf("row %d of the final names no team: %v", i+1, final[i])
		}
		delete(final[i], "team")
		for k, a := range final[i] {
			b := cup[i][k]
			fa, aNum := a.(float64)
			fb, bNum := b.(float64)
			if aNum && bNum && math.Abs(fa-fb) <= 1e-9*math.Max(1, math.Abs(fa)) {
				continue
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("row %d, %s: the final has %v, arena tournament %v", i+1, k, a, b)
			}
		}
		if len(final[i]) != len(cup[i]) {
			t.Errorf("row %d: fields %v and %v", i+1, final[i], cup[i])
		}
	}

	// Published with its submissions, the final plays again from them,
	// every game the same; a program swapped for another is caught.
	bundle := filepath.Join(t.TempDir(), "bundle")
	code, out, errs = runArena("event", "publish", "--submissions", dir, bundle)
	if code != 0 || !strings.Contains(out, "--replay "+filepath.Join(bundle, event.BundleSubmissions)) {
		t.Fatalf("event publish --submissions: exit %d\n%s%s", code, out, errs)
	}
	_, key, err := st.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	subs := filepath.Join(bundle, event.BundleSubmissions)
	code, out, errs = runArena("verify", "--key", key, "--replay", subs, "--sandbox", "local", "--concurrency", "2", bundle)
	if code != 0 || !strings.Contains(out, "the final's 6 games: 6 played again the same, 0 differ, 0 not played") || strings.Count(out, ": the same, ") != 6 {
		t.Fatalf("verify --replay: exit %d\n%s%s", code, out, errs)
	}
	random, err := os.ReadFile(filepath.Join(subs, "Alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(subs, "Beta"), append(random, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runArena("verify", "--key", key, "--replay", subs, "--sandbox", "local", bundle)
	if code != exitFailed || !strings.Contains(out, "missing: Beta") || !strings.Contains(out, "4 not played") || !strings.Contains(errs, "is not the published one") {
		t.Errorf("verify --replay with Beta's program swapped: exit %d\n%s%s", code, out, errs)
	}
}

// A mail merge reads the new teams' tokens as CSV or JSON, the notes apart
// on stderr.
func TestEventTeamsImportPrintsCSVAndJSON(t *testing.T) {
	dir := newEvent(t)
	teams := writeFile(t, filepath.Join(t.TempDir(), "teams.csv"), "name,members,contact\n\"Rooks, the\",Ann and Bo,rooks@example.org\n")
	code, out, errs := runArena("event", "teams", "import", "--format", "csv", dir, teams)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != "name,members,contact,plays_as,token" ||
		rows[1][0] != "Rooks, the" || rows[1][2] != "rooks@example.org" || rows[1][4] == "" || !strings.Contains(errs, "only this once") {
		t.Fatalf("csv: %v %q\nstderr: %s", err, rows, errs)
	}
	more := writeFile(t, filepath.Join(t.TempDir(), "more.csv"), "Bishops\n")
	code, out, errs = runArena("event", "teams", "import", "--format", "json", dir, more)
	var got []struct{ Name, PlaysAs, Token string }
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 || got[0].Name != "Bishops" || got[0].PlaysAs != "Bishops" || got[0].Token == "" {
		t.Fatalf("json: exit %d %q\nstderr: %s", code, out, errs)
	}
	st := openStore(t, dir)
	if p, err := st.Authenticate(context.Background(), got[0].Token); err != nil || p.Team == 0 {
		t.Errorf("the printed token does not log in: %+v %v", p, err)
	}
	if code, _, errs := runArena("event", "teams", "import", "--format", "xml", dir, more); code != exitUsage || !strings.Contains(errs, "--format") {
		t.Errorf("--format xml: exit %d %s", code, errs)
	}
}
