package web

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/validate"
)

// "How to submit" says what the event's own image holds, as its probe read
// it: the system executables are built for, each language's libraries,
// what the run commands' placeholders stand for; and it offers the
// server's own arena, whose download matches the checksum beside it.
func TestHowToSubmitIsTheImagesAndOffersArena(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.server.Arena = self // arena serve offers its own executable
	_, page := callAPI(t, e.http.URL, "GET", "/how-to-submit", "", "")
	if !strings.Contains(page, "being read") || strings.Contains(page, "Ubuntu 24.04") {
		t.Errorf("before the probe the page names a system it has not read")
	}
	e.server.SetImage(&validate.ImageFacts{OS: "Debian GNU/Linux 13 (trixie)", LanguageLibraries: map[string]string{
		".py": "the standard library of Python 3.13, numpy 2.2.4", ".cpp": "the C++ standard library of g++ 14.2.0; no JSON library"}})
	_, page = callAPI(t, e.http.URL, "GET", "/how-to-submit", "", "")
	page = html.UnescapeString(page)
	for _, want := range []string{"the bots run on Debian GNU/Linux 13 (trixie)", "numpy 2.2.4", "g++ 14.2.0; no JSON library",
		"<code>{class}</code> that name without its extension", "<code>{heapMiB}</code> half the bot's memory limit", "<code>{dir}</code>",
		`href="/download/arena"`, "sha256sum -c arena.sha256"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	get := func(path string) []byte {
		t.Helper()
		res, err := http.Get(e.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
		}
		return data
	}
	bin, sum := get("/download/arena"), string(get("/download/arena.sha256"))
	got := sha256.Sum256(bin)
	if want := hex.EncodeToString(got[:]) + "  arena\n"; sum != want || len(bin) < 1<<20 || !strings.HasPrefix(string(bin), "\x7fELF") {
		t.Errorf("the download (%d bytes) and its checksum %q do not match (%q)", len(bin), sum, want)
	}
	if !strings.Contains(page, hex.EncodeToString(got[:])) {
		t.Error("the page does not give the download's SHA-256")
	}
}

// The viewer of an event's game names each side by its team, its bot's
// name beside it, as the game page does.
func TestTheViewerNamesTheTeams(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	seedGames(t, e.store, e.a, e.b, 1)
	games, err := e.store.GamesOf(context.Background(), e.a.ID, 1)
	if err != nil || len(games) == 0 {
		t.Fatalf("no game: %v", err)
	}
	code, page := callAPI(t, e.http.URL, "GET", fmt.Sprintf("/games/%d/view", games[0].ID), e.admin, "")
	page = html.UnescapeString(page)
	if code != http.StatusOK || !strings.Contains(page, "Alpha (random)") || !strings.Contains(page, "Beta (greedy)") {
		t.Errorf("the viewer (%d) does not name the teams beside their bots: %s", code, page[:min(len(page), 300)])
	}
}

// A starter's ZIP lists its files with a date (an entry without one reads
// as 1980-00-00 in unzip's list), and each one as the starter has it.
func TestAStartersZIPIsDated(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	res, body := e.do(t, http.MethodGet, "/how-to-submit/python.zip", "", nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the python starter: %d", res.StatusCode)
	}
	zr, err := zip.NewReader(strings.NewReader(body), int64(len(body)))
	if err != nil || len(zr.File) == 0 {
		t.Fatalf("the starter is not a ZIP of files: %v", err)
	}
	for _, f := range zr.File {
		if d := time.Since(f.Modified); d > time.Hour || d < -time.Minute {
			t.Errorf("%s is dated %v", f.Name, f.Modified)
		}
	}
}
