package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/klauspost/compress/zstd"
)

// A blob is stored as blobs/<sha256>, or compressed as blobs/<sha256>.zst when
// that saves at least an eighth; the hash is always the content's.
const zstdSuffix = ".zst"

// MaxBlob caps what a blob may expand to when read: a data file is at most
// 10 MB, and an edited match directory must not make a reader swell.
const MaxBlob = 64 << 20

// The data-file evidence policies (Evidence.Keep).
const (
	KeepAll     = "all"     // every version (content-addressed: one blob per distinct content)
	KeepChanged = "changed" // the same: a version is stored when its content is new
	KeepFinal   = "final"   // only each side's last version survives the match
	KeepNone    = "none"    // hashes only
)

// Evidence is how much data-file content a match keeps. Every version's hash
// is recorded whatever the policy.
type Evidence struct {
	Keep string `json:"keep"`
	// Budget caps the blob bytes stored per match (0: no cap); a version
	// beyond it is recorded by hash only.
	Budget int64 `json:"budget,omitempty"`
}

// ParseKeep checks a policy name.
func ParseKeep(s string) error {
	switch s {
	case KeepAll, KeepChanged, KeepFinal, KeepNone:
		return nil
	}
	return fmt.Errorf("keep-data-files: want all, changed, final or none, got %q", s)
}

var (
	encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxBlob))
)

// PutBlob stores data in dir/blobs under its SHA-256, compressed when that
// pays, and returns the hash and the bytes written (0 when it was there).
func PutBlob(dir string, data []byte) (string, int64, error) {
	s := sha256.Sum256(data)
	sum := hex.EncodeToString(s[:])
	if HasBlob(dir, sum) {
		return sum, 0, nil
	}
	p, body := filepath.Join(dir, BlobDir, sum), data
	if z := encoder.EncodeAll(data, nil); len(z) < len(data)-len(data)/8 {
		p, body = p+zstdSuffix, z
	}
	// A temporary name of its own: matches that share a store may write
	// the same blob at once. The first to finish gives it its name, and
	// the others' copies go: a stored blob is never replaced, so a match
	// linking it never meets it unlinked halfway (a link to a file a
	// rename has just replaced fails as if it had never been).
	f, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".*.tmp")
	if err != nil {
		return "", 0, err
	}
	tmp := f.Name()
	_, werr := f.Write(body)
	if err := errors.Join(werr, f.Chmod(0o644), f.Close()); err != nil {
		os.Remove(tmp) // best effort: the write error is the one to report
		return "", 0, err
	}
	wrote := int64(len(body))
	switch err := os.Link(tmp, p); {
	case errors.Is(err, fs.ErrExist):
		wrote = 0 // another wrote it first
	case err != nil:
		// No hard links here: the rename replaces, with the same content.
		if err := os.Rename(tmp, p); err != nil {
			os.Remove(tmp) // best effort, as above
			return "", 0, err
		}
		return sum, wrote, nil
	}
	if err := os.Remove(tmp); err != nil {
		return "", 0, err
	}
	return sum, wrote, nil
}

// PutShared stores data once in store, a directory of blobs shared by many
// matches (its layout is a blobs/ directory's), and links it into
// dir/blobs: a data file that many games keep takes its room once. It
// returns the hash and the bytes the store grew by (0 when it held the
// content already). Where a link cannot be made (another file system), the
// blob is copied. A match's blobs/ is whole either way: it is read, checked
// and backed up as every other.
func PutShared(store, dir string, data []byte) (string, int64, error) {
	if err := os.MkdirAll(filepath.Join(store, BlobDir), 0o755); err != nil {
		return "", 0, err
	}
	var grew int64
	// A few times at most: a blob the last match that held it let go of
	// can leave the store between the store's write and the link.
	for range 4 {
		sum, wrote, err := PutBlob(store, data)
		if err != nil {
			return "", 0, err
		}
		grew += wrote
		if HasBlob(dir, sum) {
			return sum, grew, nil
		}
		for _, name := range []string{sum, sum + zstdSuffix} {
			from, to := filepath.Join(store, BlobDir, name), filepath.Join(dir, BlobDir, name)
			err := os.Link(from, to)
			switch {
			case err == nil || errors.Is(err, fs.ErrExist):
				return sum, grew, nil
			case errors.Is(err, fs.ErrNotExist):
				continue // the other form, or gone
			}
			// No link here (another file system): a copy of its own.
			if _, _, err := PutBlob(dir, data); err != nil {
				return "", 0, err
			}
			return sum, grew, nil
		}
	}
	return "", 0, fmt.Errorf("a blob kept leaving the shared store %s", store)
}

// ReleaseShared removes a blob from store when no match links it any more
// (its only link is the store's own).
func ReleaseShared(store, sum string) error {
	var errs []error
	for _, name := range []string{sum, sum + zstdSuffix} {
		p := filepath.Join(store, BlobDir, name)
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink == 1 {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// IsSum says whether sum is a SHA-256 as a blob is named: 64 lowercase
// hex digits (a name from a transcript may be anything).
func IsSum(sum string) bool {
	if len(sum) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(sum) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// HasBlob reports whether a blob with this hash is stored, in either form.
func HasBlob(dir, sum string) bool {
	if !IsSum(sum) {
		return false
	}
	for _, name := range []string{sum, sum + zstdSuffix} {
		if _, err := os.Stat(filepath.Join(dir, BlobDir, name)); err == nil {
			return true
		}
	}
	return false
}

// RemoveBlob deletes a stored blob, in either form.
func RemoveBlob(dir, sum string) error {
	if !IsSum(sum) {
		return fmt.Errorf("blob %q: not a SHA-256", sum)
	}
	var errs []error
	for _, name := range []string{sum, sum + zstdSuffix} {
		if err := os.Remove(filepath.Join(dir, BlobDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReadBlob returns a blob's content, raw or compressed, refusing one that
// expands past MaxBlob. It does not check the hash: the caller compares.
func ReadBlob(dir, sum string) ([]byte, error) {
	if !IsSum(sum) {
		return nil, fmt.Errorf("blob %q: not a SHA-256", sum)
	}
	p := filepath.Join(dir, BlobDir, sum)
	data, err := readCapped(p)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return data, err
	}
	z, zerr := readCapped(p + zstdSuffix)
	if errors.Is(zerr, fs.ErrNotExist) {
		return nil, err // neither form: report the plain name
	}
	if zerr != nil {
		return nil, zerr
	}
	out, derr := decoder.DecodeAll(z, nil)
	if derr != nil {
		return nil, fmt.Errorf("blob %s: %w", sum, derr)
	}
	if len(out) > MaxBlob {
		return nil, fmt.Errorf("blob %s expands past %d bytes", sum, MaxBlob)
	}
	return out, nil
}

// readCapped reads the regular file p, at most MaxBlob bytes: a named
// pipe in its place is refused, not waited on.
func readCapped(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close() // read only
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(p))
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(f, MaxBlob+1)); err != nil {
		return nil, err
	}
	if b.Len() > MaxBlob {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(p), MaxBlob)
	}
	return b.Bytes(), nil
}
