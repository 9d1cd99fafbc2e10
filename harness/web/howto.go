package web

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"runtime"
	"sync"
	"time"

	"github.com/arenabots/arena/examples"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/rules"
)

// toolchains are what the runtime image offers the languages (their
// toolchains' versions, their libraries) and its OS, read once the server
// has started (the probe takes seconds).
type toolchains struct {
	mu    sync.Mutex
	found map[string]validate.Toolchain
	libs  map[string]string
	os    string
}

// SetImage tells the server what the image probe found: each language's
// toolchain and libraries, and the image's OS.
func (s *Server) SetImage(f *validate.ImageFacts) {
	s.tools.mu.Lock()
	defer s.tools.mu.Unlock()
	s.tools.found, s.tools.libs, s.tools.os = f.Toolchains, f.LanguageLibraries, f.OS
	if s.tools.found == nil {
		s.tools.found = map[string]validate.Toolchain{}
	}
}

type languageRow struct {
	Ext, Run, Build string
	Version         string
	Missing         []string
	// Libraries is what a bot in the language may use, as the image's
	// build listed it.
	Libraries string
}

type howtoData struct {
	GameTitle string
	Explain   string
	// Adapter is what a game that runs submissions through its adapter
	// asks for ("": an executable, a script or source).
	Adapter string
	Require []string
	Upload  int64
	Limits  struct {
		Turn        time.Duration
		Memory      int64
		CPUs        float64
		DataFiles   int
		DataFileMax int64
	}
	Languages []languageRow
	Probed    bool
	// OS is the runtime image's operating system ("" until it is read).
	OS       string
	Starters []examples.Starter
	Closed   bool
	// Site is this site's address, for the commands that upload.
	Site string
	// Arena is the arena binary the site offers (nil: none).
	Arena *ownBinary
}

// howTo is "How to submit", made from the event's own configuration and
// game: what a submission is, how the file that runs is chosen, what the
// event requires beside it, the languages with the image's versions, the
// limits, the protocol, and starters that pass this event's validation.
func (s *Server) howTo(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	d := howtoData{GameTitle: s.Game.Title(), Explain: s.Game.Explain(), Require: s.Config.Validation.Require,
		Upload: int64(s.Config.Limits.UploadSize), Starters: examples.Starters(s.Config.Game), Site: "http://" + r.Host}
	if s.secure(r) {
		d.Site = "https://" + r.Host
	}
	if pack, ok := s.Game.(rules.Packager); ok {
		d.Adapter = pack.Submission()
	}
	resolved, err := s.Config.Settings().Resolve()
	if err != nil {
		return err
	}
	d.Limits.Turn, d.Limits.Memory, d.Limits.CPUs = resolved.Limits.TurnTimeout, resolved.Limits.Memory, resolved.Limits.CPUs
	if f := s.Game.Protocol().Files; f != nil {
		d.Limits.DataFiles, d.Limits.DataFileMax = f.DataFiles, f.MaxDataFileBytes
	}
	table := s.Languages
	if table == nil {
		table = langs.Default()
	}
	s.tools.mu.Lock()
	found, libs := s.tools.found, s.tools.libs
	d.OS = s.tools.os
	s.tools.mu.Unlock()
	d.Probed = found != nil
	for _, ext := range table.Exts() {
		l := table[ext]
		row := languageRow{Ext: ext, Run: l.Run, Build: l.Build, Libraries: libs[ext]}
		if tc, ok := found[ext]; ok {
			row.Version, row.Missing = tc.Version, tc.Missing
		}
		d.Languages = append(d.Languages, row)
	}
	if b, err := s.arenaBinary(); err == nil {
		d.Arena = b
	}
	if _, closed, err := s.Store.Closed(r.Context()); err != nil {
		return err
	} else if closed {
		d.Closed = true
	}
	return s.render(w, r, p, http.StatusOK, "howto", "How to submit", d)
}

// starter is a starter of the event's game, zipped: what a team downloads
// and, as it is, uploads.
func (s *Server) starter(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	name := r.PathValue("starter")
	for _, st := range examples.Starters(s.Config.Game) {
		if st.Name+".zip" != name {
			continue
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		err := fs.WalkDir(st.Files, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(st.Files, p)
			if err != nil {
				return err
			}
			// Dated when the server started: a ZIP entry without a date
			// reads as 1980-00-00 in an unzip's list.
			h := &zip.FileHeader{Name: path.Join(st.Name, p), Method: zip.Deflate, Modified: s.started}
			mode := fs.FileMode(0o644)
			if path.Ext(p) == ".py" && bytes.HasPrefix(data, []byte("#!")) {
				mode = 0o755
			}
			h.SetMode(mode)
			f, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			_, err = f.Write(data)
			return err
		})
		if err == nil {
			err = zw.Close()
		}
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		_, err = w.Write(buf.Bytes())
		return err
	}
	return &httpError{http.StatusNotFound, "not_found", "no such starter"}
}

// ownBinary is the arena executable the site offers teams (Server.Arena:
// the team's build of arena), when it is built for the system bots run on
// (linux/amd64): every command a report suggests (arena rules legal, arena
// validate) can then be run by a team. Its digest is read once.
type ownBinary struct {
	once sync.Once
	path string
	Sum  string
	Size int64
	err  error
}

// arenaBinary is the arena offered to teams and its SHA-256, or why it is not
// offered.
func (s *Server) arenaBinary() (*ownBinary, error) {
	b := &s.self
	b.once.Do(func() {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			b.err = fmt.Errorf("this server runs on %s/%s; teams need arena for linux/amd64", runtime.GOOS, runtime.GOARCH)
			return
		}
		if b.path = s.Arena; b.path == "" {
			b.err = errors.New("no arena binary was given to the server")
			return
		}
		f, err := os.Open(b.path)
		if err != nil {
			b.err = err
			return
		}
		defer f.Close()
		h := sha256.New()
		if b.Size, b.err = io.Copy(h, f); b.err == nil {
			b.Sum = hex.EncodeToString(h.Sum(nil))
		}
	})
	return b, b.err
}

// downloadArena serves the arena offered to teams.
func (s *Server) downloadArena(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	b, err := s.arenaBinary()
	if err != nil {
		return &httpError{http.StatusNotFound, "not_found", "arena is not offered here: " + err.Error()}
	}
	f, err := os.Open(b.path)
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="arena"`)
	http.ServeContent(w, r, "arena", time.Time{}, f)
	return nil
}

// downloadArenaSum serves the binary's SHA-256 as sha256sum -c reads it.
func (s *Server) downloadArenaSum(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	b, err := s.arenaBinary()
	if err != nil {
		return &httpError{http.StatusNotFound, "not_found", "arena is not offered here: " + err.Error()}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err = fmt.Fprintf(w, "%s  arena\n", b.Sum)
	return err
}
