package tournament

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/transcript"
)

// A match directory travels as a tar of its regular files: the transcript,
// result.json and blobs/.
var packed = regexp.MustCompile(`^(` + regexp.QuoteMeta(transcript.FileName) + `|` + regexp.QuoteMeta(match.ResultFile) +
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

// unpack writes a worker's archive into dir, which must not exist, taking
// only the files a match directory holds, as regular files, within a size
// cap: the archive is untrusted.
func unpack(data []byte, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, transcript.BlobDir), 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(bytes.NewReader(data))
	var total int64
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
			return err
		}
		_, cerr := io.Copy(f, io.LimitReader(tr, h.Size))
		if err := errors.Join(cerr, f.Close()); err != nil {
			return err
		}
	}
	if !seen[transcript.FileName] {
		return errors.New("no transcript")
	}
	return nil
}
