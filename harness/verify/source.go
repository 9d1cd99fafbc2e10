package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/transcript"
)

// Source opens a bundle's files by their slash-separated paths. A file
// may be read to limit bytes: one known to weigh more is refused when it
// is opened, one found to as it is read fails there (a *TooBigError).
type Source interface {
	Open(ctx context.Context, name string, limit int64) (io.ReadCloser, error)
}

// Read reads a bundle's file whole, a file small by its kind.
func Read(ctx context.Context, src Source, name string, limit int64) ([]byte, error) {
	rc, err := src.Open(ctx, name, limit)
	if err != nil {
		return nil, err
	}
	defer rc.Close() // read only
	return io.ReadAll(rc)
}

// The most each kind of a bundle's files may weigh.
const (
	// maxCheckpoint: a signed checkpoint is three lines and a signature
	// or a few.
	maxCheckpoint = 64 << 10
	// maxEntryBytes is the most one entry of an entry bundle weighs with
	// its two bytes of length; a bundle of W entries weighs W times it at
	// most.
	maxEntryBytes = 2 + eventlog.MaxEntry - 1
	// MaxTranscript: a published transcript, both sides' private fields
	// left out, is some 44 KB a game; its longest line may be
	// transcript.MaxLine.
	MaxTranscript = transcript.MaxLine
	// maxStandings: standings.json, a row per player.
	maxStandings = 16 << 20
)

// MaxEntries is the most entries a bundle's log may claim: a checkpoint
// of more is refused before anything is read by its claim.
const MaxEntries = 1 << 32

// DefaultTimeout is how long a whole check may take unless
// Options.Timeout says otherwise.
const DefaultTimeout = 10 * time.Minute

// fileTimeout is how long one file of a served bundle may take.
const fileTimeout = time.Minute

// TooBigError is a file of a bundle that weighs more than its kind may.
type TooBigError struct {
	Name  string
	Limit int64
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s is more than %d bytes, the most it may weigh", e.Name, e.Limit)
}

// Dir is a bundle in a directory. Only regular files inside it are read:
// a link that leads out of it, a named pipe or a device is refused, and
// none is opened in a way that could block.
type Dir string

func (d Dir) Open(_ context.Context, name string, limit int64) (io.ReadCloser, error) {
	if !fsPath(name) {
		return nil, fmt.Errorf("%q is not a path inside the bundle", name)
	}
	root, err := os.OpenRoot(string(d))
	if err != nil {
		return nil, err
	}
	defer root.Close() // read only: the file opened stays open
	rel := filepath.FromSlash(name)
	fi, err := root.Stat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read inside the bundle (a link out of it?): %w", name, err)
	}
	if err := regular(name, fi, limit); err != nil {
		return nil, err
	}
	// Not blocking, should it have become a named pipe since: the file
	// open is checked again.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read inside the bundle: %w", name, err)
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(name, fi, limit)
	}
	if err != nil {
		f.Close() // read only
		return nil, err
	}
	return limited(f, name, limit, f.Close), nil
}

// Lister is a Source that can list its files (slash-separated paths,
// links and other files that are not regular ones left out).
type Lister interface {
	Files() ([]string, error)
}

// Files are the regular files of the bundle, in lexical order.
func (d Dir) Files() ([]string, error) {
	var out []string
	err := filepath.WalkDir(string(d), func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Type().IsRegular() {
			rel, err := filepath.Rel(string(d), p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// regular says why the file fi describes is not one a bundle's file may
// be: a regular file of at most limit bytes.
func regular(name string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", name, fileKind(fi.Mode()))
	}
	if fi.Size() > limit {
		return &TooBigError{name, limit}
	}
	return nil
}

// fileKind names a file's type for people.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a link"
	}
	return "mode " + m.String()
}

// limited reads r to limit bytes, failing with a *TooBigError past
// them; closing it calls closeFn.
func limited(r io.Reader, name string, limit int64, closeFn func() error) io.ReadCloser {
	return &limitReader{r: io.LimitReader(r, limit+1), name: name, limit: limit, close: closeFn}
}

type limitReader struct {
	r     io.Reader
	name  string
	limit int64
	read  int64
	close func() error
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if l.read += int64(n); l.read > l.limit {
		return n - int(l.read-l.limit), &TooBigError{l.name, l.limit}
	}
	return n, err
}

func (l *limitReader) Close() error { return l.close() }

// URL is a bundle served over HTTP (a static copy, or the event's site for
// the log: /log/...). Each file may take a minute; a redirect is followed
// only within the bundle's origin (its scheme, host and port).
type URL string

func (u URL) Open(ctx context.Context, name string, limit int64) (io.ReadCloser, error) {
	if !fsPath(name) {
		return nil, fmt.Errorf("%q is not a path inside the bundle", name)
	}
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(string(u), "/")+"/"+name, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if res.StatusCode != http.StatusOK || res.ContentLength > limit {
		res.Body.Close() // read only
		cancel()
		if res.StatusCode != http.StatusOK {
			return nil, &statusError{req.URL.String(), res.StatusCode, res.Status}
		}
		return nil, &TooBigError{req.URL.String(), limit}
	}
	return limited(res.Body, req.URL.String(), limit, func() error {
		defer cancel()
		return res.Body.Close()
	}), nil
}

// client fetches a served bundle's files, following redirects only
// within the origin of the file asked for.
var client = &http.Client{CheckRedirect: sameOrigin}

// maxRedirects is how many redirects one file may take (net/http's own).
const maxRedirects = 10

func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	if want := origin(via[0].URL); origin(req.URL) != want {
		return fmt.Errorf("%s redirects to %s, out of the bundle's origin %s: refused", via[len(via)-1].URL, req.URL, want)
	}
	return nil
}

// origin is a URL's scheme, host and port, the port given even when it
// is the scheme's own.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// statusError is a served file's answer other than 200 OK; a 404 or a
// 410 is a file that does not exist.
type statusError struct {
	url    string
	code   int
	status string
}

func (e *statusError) Error() string { return e.url + ": " + e.status }

func (e *statusError) Is(target error) bool {
	return target == fs.ErrNotExist && (e.code == http.StatusNotFound || e.code == http.StatusGone)
}

// fsPath says whether name is a clean relative path that stays inside
// the bundle.
func fsPath(name string) bool {
	return name != "" && path.Clean(name) == name && !path.IsAbs(name) && name != ".." && !strings.HasPrefix(name, "../") && !strings.Contains(name, "\\")
}
