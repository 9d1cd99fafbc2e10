package web

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/arenabots/arena/examples"
	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/rules"
)

// toolchains are the versions of the languages' toolchains the runtime
// image has, read once the server has started (the probe takes seconds).
type toolchains struct {
	mu    sync.Mutex
	found map[string]validate.Toolchain
}

// SetToolchains tells the server what the image probe found of each
// language's toolchain.
func (s *Server) SetToolchains(found map[string]validate.Toolchain) {
	s.tools.mu.Lock()
	defer s.tools.mu.Unlock()
	s.tools.found = found
}

type languageRow struct {
	Ext, Run, Build string
	Version         string
	Missing         []string
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
	Starters  []examples.Starter
	Closed    bool
	// Site is this site's address, for the commands that upload.
	Site string
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
	langs := s.Languages
	if langs == nil {
		langs = build.Default()
	}
	s.tools.mu.Lock()
	found := s.tools.found
	s.tools.mu.Unlock()
	d.Probed = found != nil
	for _, ext := range langs.Exts() {
		l := langs[ext]
		row := languageRow{Ext: ext, Run: l.Run, Build: l.Build}
		if tc, ok := found[ext]; ok {
			row.Version, row.Missing = tc.Version, tc.Missing
		}
		d.Languages = append(d.Languages, row)
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
			h := &zip.FileHeader{Name: path.Join(st.Name, p), Method: zip.Deflate}
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
