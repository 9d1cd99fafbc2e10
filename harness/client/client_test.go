package client

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arenabots/arena/harness/api"
)

// uploadSink is a server that takes one upload and keeps its file.
type uploadSink struct {
	mu       sync.Mutex
	requests int
	auth     string
	name     string
	data     []byte
}

func (u *uploadSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests++
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/submissions" {
		http.NotFound(w, r)
		return
	}
	u.auth = r.Header.Get("Authorization")
	f, h, err := r.FormFile("file")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	defer f.Close()
	u.name = h.Filename
	if u.data, err = io.ReadAll(f); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{"submission": api.Submission{ID: 3, Filename: h.Filename, Size: int64(len(u.data)), State: api.Queued}})
}

func TestClientUploadsADirectoryAsAZip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mybot")
	files := map[string]struct {
		data string
		mode os.FileMode
	}{
		"run":               {"#!/bin/sh\necho hi\n", 0o755},
		"README.md":         {"# my bot\n", 0o644},
		".hidden":           {"kept too", 0o600},
		"src/main.c":        {"int main(void) { return 0; }\n", 0o644},
		"src/deep/data.bin": {"\x00\x01\x02", 0o644},
	}
	for name, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	sink := &uploadSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	c := &Client{Server: srv.URL + "/", Token: "tok"}
	sub, err := c.Upload(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if sub.ID != 3 || sub.State != api.Queued {
		t.Errorf("the stored submission reads as %+v", sub)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.name != "mybot.zip" || sink.auth != "Bearer tok" {
		t.Errorf("uploaded as %q with %q, want mybot.zip with the bearer token", sink.name, sink.auth)
	}
	zr, err := zip.NewReader(bytes.NewReader(sink.data), int64(len(sink.data)))
	if err != nil {
		t.Fatalf("the upload is not a ZIP: %v", err)
	}
	got := map[string]bool{}
	for _, zf := range zr.File {
		want, ok := files[zf.Name]
		if !ok {
			t.Errorf("the ZIP holds %q, which is not a file of the directory", zf.Name)
			continue
		}
		got[zf.Name] = true
		r, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != want.data {
			t.Errorf("%s: %q, want %q", zf.Name, data, want.data)
		}
		if zf.Mode().Perm() != want.mode {
			t.Errorf("%s: mode %v, want %v", zf.Name, zf.Mode().Perm(), want.mode)
		}
	}
	if len(got) != len(files) {
		t.Errorf("the ZIP holds %v, want every file of %v", got, files)
	}
}

func TestClientUploadsAFileUnderItsName(t *testing.T) {
	bot := filepath.Join(t.TempDir(), "bot.py")
	if err := os.WriteFile(bot, []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := &uploadSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	if _, err := (&Client{Server: srv.URL, Token: "tok"}).Upload(context.Background(), bot); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.name != "bot.py" || string(sink.data) != "print('hi')\n" {
		t.Errorf("uploaded %q holding %q", sink.name, sink.data)
	}
}

func TestClientRefusesASymlinkInADirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "secret")); err != nil {
		t.Fatal(err)
	}
	sink := &uploadSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	_, err := (&Client{Server: srv.URL, Token: "tok"}).Upload(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "secret is a symbolic link") {
		t.Errorf("got %v, want the symbolic link refused by its name", err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.requests != 0 {
		t.Errorf("the server was sent %d requests", sink.requests)
	}
}

func TestClientErrorAnswersAreAPIErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/api/v1/submissions":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error": {"code": "quota", "message": "12 uploads in the last hour: try again later"}}`)
		case "/api/v1/submissions/9":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error": {"code": "not_found", "message": "not found"}}`)
		default:
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html>bad gateway</html>")
		}
	}))
	defer srv.Close()
	bot := filepath.Join(t.TempDir(), "bot.py")
	if err := os.WriteFile(bot, []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Client{Server: srv.URL, Token: "tok"}
	ctx := context.Background()

	_, err := c.Upload(ctx, bot)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || ae.Code != "quota" ||
		ae.Message != "12 uploads in the last hour: try again later" {
		t.Fatalf("the upload's error is %#v", err)
	}
	if !strings.Contains(err.Error(), ae.Message) || !strings.Contains(err.Error(), "quota") {
		t.Errorf("the error says %q, want the message and the code", err)
	}

	_, err = c.Submission(ctx, 9)
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code != "not_found" {
		t.Errorf("the submission's error is %#v", err)
	}

	_, err = c.ReportText(ctx, 9)
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway || !strings.Contains(ae.Message, "502") {
		t.Errorf("an answer that is not the API's is %#v", err)
	}
}

func TestClientWaitTellsEachStateOnce(t *testing.T) {
	var mu sync.Mutex
	states := []api.State{api.Queued, api.Queued, api.Building, api.Validating, api.Validating, api.Failed}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		s := states[0]
		if len(states) > 1 {
			states = states[1:]
		}
		json.NewEncoder(w).Encode(map[string]any{"submission": api.Submission{ID: 4, State: s}, "report": nil})
	}))
	defer srv.Close()
	var told []api.State
	sub, err := (&Client{Server: srv.URL}).Wait(context.Background(), 4, func(s api.Submission) { told = append(told, s.State) })
	if err != nil {
		t.Fatal(err)
	}
	if sub.State != api.Failed || fmt.Sprint(told) != "[queued building validating failed]" {
		t.Errorf("ended %s, told %v", sub.State, told)
	}
}
