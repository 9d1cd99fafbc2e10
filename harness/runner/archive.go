package runner

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/arenabots/arena/harness/transcript"
)

// A match directory travels as a tar of its regular files: the transcript,
// result.json and blobs/.
var packed = regexp.MustCompile(`^(` + regexp.QuoteMeta(transcript.FileName) + `|` + regexp.QuoteMeta(transcript.ResultFile) +
	`|` + transcript.BlobDir + `/[0-9a-f]{64}(\.zst)?)$`)

// maxUnpacked caps what a worker's archive may expand to.
const maxUnpacked = 512 << 20

func pack(dir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pack the match directory: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errOwnDisk is a failure to write what a worker sent to the coordinator's
// own disk: its fault, never the worker's.
var errOwnDisk = errors.New("the coordinator's disk")

// ownDisk is a file being written whose errors are the coordinator's
// (errOwnDisk), kept apart from the archive's.
type ownDisk struct {
	f   *os.File
	err error
}

func (w *ownDisk) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		w.err = fmt.Errorf("%w: %w", errOwnDisk, err)
	}
	return n, err
}

// counted counts what is read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// heldIn reads an archive's entry, failing once what was unpacked (out)
// is more than what was read of the archive (in).
type heldIn struct {
	r   io.Reader
	in  *counted
	out *int64
}

func (h *heldIn) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if *h.out += int64(n); *h.out > h.in.n {
		return n, errors.New("it unpacks to more than it holds (a sparse entry?)")
	}
	return n, err
}

// unpack writes a worker's archive into dir, which must not exist, taking
// only the files a match directory holds, as regular files, within a size
// cap: the archive is untrusted. A failure to write is errOwnDisk; any
// other error is the archive's.
func unpack(archive io.Reader, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, transcript.BlobDir), 0o755); err != nil {
		return fmt.Errorf("%w: %w", errOwnDisk, err)
	}
	if archive == nil {
		return errors.New("no archive came with it")
	}
	// An archive holds every byte it unpacks to: a tar cannot compress,
	// and one that says more (a sparse entry's holes) is refused as it
	// expands, not once it has written 512 MiB of NULs.
	in := &counted{r: archive}
	tr := tar.NewReader(in)
	var total, unpacked int64
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || !packed.MatchString(h.Name) || seen[h.Name] {
			return fmt.Errorf("entry %q: not a file of a match directory", h.Name)
		}
		seen[h.Name] = true
		if total += h.Size; h.Size < 0 || total > maxUnpacked {
			return fmt.Errorf("the archive expands past %d bytes", maxUnpacked)
		}
		f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(h.Name)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("%w: %w", errOwnDisk, err)
		}
		w := &ownDisk{f: f}
		_, cerr := io.Copy(w, &heldIn{r: io.LimitReader(tr, h.Size), in: in, out: &unpacked})
		if err := f.Close(); err != nil {
			return errors.Join(cerr, fmt.Errorf("%w: %w", errOwnDisk, err))
		}
		if w.err != nil {
			return w.err
		}
		if cerr != nil {
			return cerr
		}
	}
	if !seen[transcript.FileName] {
		return errors.New("no transcript")
	}
	return nil
}

// onlyNamed checks that the match directory dir (a worker's, unpacked and
// replayed) holds nothing its transcript does not name: its transcript,
// result.json, and in blobs/ the data files its turns recorded, in all at
// most ev's budget when it has one. Anything else is refused: a result
// brings its evidence, nothing more.
func onlyNamed(dir string, ev transcript.Evidence) error {
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return err
	}
	named := map[string]bool{}
	for _, l := range lines {
		if l.Type != transcript.TypeTurn {
			continue
		}
		var t transcript.Turn
		if err := l.Decode(&t); err != nil {
			return err
		}
		for _, df := range t.DataFiles {
			named[df.SHA256] = true
		}
	}
	des, err := os.ReadDir(filepath.Join(dir, transcript.BlobDir))
	if err != nil {
		return err
	}
	var blobs int64
	for _, de := range des {
		sum := strings.TrimSuffix(de.Name(), ".zst")
		if !named[sum] {
			return fmt.Errorf("blobs/%s is no data file its transcript names", de.Name())
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		blobs += fi.Size()
	}
	if ev.Budget > 0 && blobs > ev.Budget {
		return fmt.Errorf("its data files take %d bytes, more than the evidence budget of %d", blobs, ev.Budget)
	}
	return nil
}
