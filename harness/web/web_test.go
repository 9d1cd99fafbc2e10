package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// testEvent is an event with two teams, A and B, and the organizer, served
// by httptest; nothing validates its uploads.
type testEvent struct {
	dir    string
	store  *event.Store
	server *Server
	http   *httptest.Server
	a, b   event.NewTeam
	admin  string
	finals *services.FinalRunner // set by playsFinals
}

func newTestEvent(t *testing.T, toml string) *testEvent {
	t.Helper()
	dir := t.TempDir()
	if toml == "" {
		toml = "game = \"codeclash\"\n"
	}
	if err := os.WriteFile(filepath.Join(dir, event.ConfigFile), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := event.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	e := &testEvent{dir: dir, store: st}
	ctx := context.Background()
	if e.a, err = st.AddTeam(ctx, "Alpha", "ann, al", "alpha@example.org"); err != nil {
		t.Fatal(err)
	}
	if e.b, err = st.AddTeam(ctx, "Beta", "", ""); err != nil {
		t.Fatal(err)
	}
	if e.admin, err = st.NewAdminToken(ctx); err != nil {
		t.Fatal(err)
	}
	e.server = New(st, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	e.http = httptest.NewServer(e.server.Handler())
	t.Cleanup(e.http.Close)
	t.Cleanup(e.server.CloseStreams)
	return e
}

// do sends a request with token as Bearer ("" for none).
func (e *testEvent) do(t *testing.T, method, path, token string, body io.Reader, contentType string) (*http.Response, string) {
	t.Helper()
	ctx := context.Background()
	if strings.HasSuffix(path, "/events") {
		// A stream does not end: read what it sends in a second.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Second)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, e.http.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", e.http.URL) // as this site's own pages post
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	return res, string(data)
}

// multipartFile is a form with one file field.
func multipartFile(t *testing.T, name string, data []byte) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

// playGame plays a real Code Clash match (the example random bot against
// the example greedy one, on the local backend) into the event as white's
// team's game.
// loadBot is an example bot (a Go package) built and loaded.
func loadBot(t *testing.T, pkg string) *submission.Bot {
	t.Helper()
	b, err := submission.Load(gobuild.MustStatic(t, pkg), submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func playGame(t *testing.T, e *testEvent, white event.Side, kind string) event.Game {
	t.Helper()
	return playGameOf(t, e, match.Config{Game: codeclash.Game{}, Seed: 3,
		White: loadBot(t, "./examples/random"), Black: loadBot(t, "./examples/greedy")}, white, event.Side{}, kind)
}

// playGameOf plays cfg's game on the local sandbox and records it as a game
// of kind between white and black.
func playGameOf(t *testing.T, e *testEvent, cfg match.Config, white, black event.Side, kind string) event.Game {
	t.Helper()
	dir := filepath.Join(e.dir, "games", strings.ReplaceAll(t.Name(), "/", "_"))
	cfg.Backend, cfg.Limits, cfg.Dir = &local.Backend{Dir: t.TempDir()}, sandbox.DefaultLimits(), dir
	if _, err := match.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	g, err := e.store.AddGame(context.Background(), kind, dir, white, black, 0)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
