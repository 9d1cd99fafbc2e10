// Package transcript writes and reads the record of a match: transcript.jsonl,
// one JSON object per line (a header, one record per turn, a footer), each
// carrying the SHA-256 of the line before it so that editing, inserting,
// dropping or reordering a line is detected; and blobs/, holding each distinct
// data-file content once under its SHA-256.
//
// The writer keeps the file a complete transcript at every moment: after each
// record it appends a provisional "aborted" footer, which the next record
// replaces. A crash of arena leaves a transcript that says it was aborted.
//
// This package must never rewrite a line once it is followed by another, nor
// trust what it reads: a transcript handed in may have been edited, so
// readers verify the chain before a record is believed.
package transcript

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// File names inside a match directory.
const (
	FileName = "transcript.jsonl"
	BlobDir  = "blobs"
	// ResultFile is the game's Result as JSON, written once it ends.
	ResultFile = "result.json"
)

// Record types.
const (
	TypeHeader = "header"
	TypeTurn   = "turn"
	TypeFooter = "footer"
)

// Envelope is the part every record shares.
type Envelope struct {
	Type string `json:"type"`
	Seq  int    `json:"seq"`
	Prev string `json:"prev"` // SHA-256 of the previous line; "" for the header
}

// Writer appends records to a transcript.
type Writer struct {
	mu          sync.Mutex
	f           *os.File
	dir         string
	seq         int
	prev        string
	end         int64 // where the provisional footer starts
	provisional func() any
	signer      ed25519.PrivateKey
	closed      bool
	shared      string // a store shared with other matches, "" for none
}

// ShareBlobs makes the writer store blobs once in store, a directory
// shared by many matches (an event's games), and link them into the
// match's blobs/: see PutShared.
func (w *Writer) ShareBlobs(store string) { w.shared = store }

// Create starts a transcript in dir, which must exist.
func Create(dir string) (*Writer, error) {
	// blobs/ first: a failure then leaves no empty transcript behind to block
	// the next attempt.
	if err := os.MkdirAll(filepath.Join(dir, BlobDir), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f, dir: dir}, nil
}

// SetProvisional sets the footer written after every record until the real
// one; fn returns its body.
func (w *Writer) SetProvisional(fn func() any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.provisional = fn
}

// SetSigner makes every footer, provisional or final, carry an ed25519
// signature over the footer line, which holds the hash of everything before it.
func (w *Writer) SetSigner(key ed25519.PrivateKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.signer = key
}

// line encodes a record at the current chain position, signing footers.
func (w *Writer) line(typ string, body any) ([]byte, error) {
	line, err := encode(Envelope{Type: typ, Seq: w.seq, Prev: w.prev}, body)
	if err != nil || typ != TypeFooter || w.signer == nil {
		return line, err
	}
	return sign(line, w.signer), nil
}

// Append writes a record of the given type. body is marshalled and merged with
// the envelope, which comes first on the line.
func (w *Writer) Append(typ string, body any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("transcript: closed")
	}
	if w.f == nil {
		return errors.New("transcript: Append after Close")
	}
	line, err := w.line(typ, body)
	if err != nil {
		return err
	}
	if err := w.f.Truncate(w.end); err != nil {
		return err
	}
	if _, err := w.f.WriteAt(append(line, '\n'), w.end); err != nil {
		return err
	}
	w.end += int64(len(line)) + 1
	w.prev = Hash(line)
	w.seq++
	if typ == TypeFooter {
		w.closed = true
		w.provisional = nil
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("transcript: the footer was written but not synced: %w", err)
		}
		return nil
	}
	if w.provisional != nil {
		// The record is written; without the provisional footer after it the
		// file would not end in a footer, so a failure here is the caller's too.
		foot, err := w.line(TypeFooter, w.provisional())
		if err != nil {
			return fmt.Errorf("transcript: provisional footer: %w", err)
		}
		if _, err := w.f.WriteAt(append(foot, '\n'), w.end); err != nil {
			return fmt.Errorf("transcript: provisional footer: %w", err)
		}
	}
	return nil
}

// Close flushes and closes the file. The last provisional footer, if any, stays.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// PutBlob stores data under its SHA-256 unless it is there already, and returns
// the hash and the bytes it wrote.
func (w *Writer) PutBlob(data []byte) (string, int64, error) {
	if w.shared != "" {
		return PutShared(w.shared, w.dir, data)
	}
	return PutBlob(w.dir, data)
}

// HasBlob reports whether a blob with this hash is stored.
func (w *Writer) HasBlob(sum string) bool { return HasBlob(w.dir, sum) }

// RemoveBlob deletes a stored blob.
func (w *Writer) RemoveBlob(sum string) error {
	if err := RemoveBlob(w.dir, sum); err != nil {
		return err
	}
	if w.shared != "" {
		return ReleaseShared(w.shared, sum)
	}
	return nil
}

// EncodeResult is result.json as a match directory holds it: indented by two
// spaces, with a final newline.
func EncodeResult(r Result) ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Hash is the chain hash of one line (without its newline).
func Hash(line []byte) string {
	s := sha256.Sum256(line)
	return hex.EncodeToString(s[:])
}

// encode writes the envelope's fields, then the body's, as one JSON object.
func encode(env Envelope, body any) ([]byte, error) {
	head, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return head, nil
	}
	rest, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	rest = bytes.TrimSpace(rest)
	if len(rest) < 2 || rest[0] != '{' {
		return nil, fmt.Errorf("transcript: record body must be a JSON object")
	}
	if string(rest) == "{}" {
		return head, nil
	}
	out := append(head[:len(head)-1], ',')
	return append(out, rest[1:]...), nil
}

// Line is one record read back.
type Line struct {
	Envelope
	Raw  []byte // the exact line, without the newline
	Hash string
}

// Decode unmarshals the line's body into v.
func (l Line) Decode(v any) error { return json.Unmarshal(l.Raw, v) }

// MaxLine is the longest line Read accepts.
const MaxLine = 64 << 20

// errNoNewline marks a last line that does not end in a newline.
var errNoNewline = errors.New("no newline")

// splitLines splits at "\n" only: every other byte, "\r" included, belongs to
// the line and to its hash. A last line without its newline is an error.
func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return 0, nil, errNoNewline
	}
	return 0, nil, nil
}

// Read reads every line of a transcript without judging it. Each line is
// exactly the bytes before a newline, so the hashes cover every byte of the
// file but the newlines themselves; a last line without its newline was cut
// short and is refused.
func Read(r io.Reader) ([]Line, error) {
	var out []Line
	err := scan(r, MaxLine, func(l Line) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

// scan calls fn with each line r holds, at most maxLine bytes long, in
// order, holding one line at a time; fn's error stops it.
func scan(r io.Reader, maxLine int, fn func(Line) error) error {
	s := NewScanner(r, maxLine)
	for s.Scan() {
		if err := fn(s.Line()); err != nil {
			return err
		}
	}
	return s.Err()
}

// Scanner reads a transcript a line at a time, holding one line: the way
// to read a transcript from a source that is not trusted to be small.
type Scanner struct {
	sc   *bufio.Scanner
	max  int // the longest line
	n    int
	line Line
	err  error
}

// NewScanner reads r's lines, each at most maxLine bytes long (at most
// MaxLine; 0: MaxLine).
func NewScanner(r io.Reader, maxLine int) *Scanner {
	if maxLine <= 0 || maxLine > MaxLine {
		maxLine = MaxLine
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(64<<10, maxLine)), maxLine)
	sc.Split(splitLines)
	return &Scanner{sc: sc, max: maxLine}
}

// Scan reads the next line; false at the end or on an error (Err).
func (s *Scanner) Scan() bool {
	if s.err != nil || !s.sc.Scan() {
		if s.err == nil {
			s.err = s.scanErr(s.sc.Err())
		}
		return false
	}
	s.n++
	raw := append([]byte(nil), s.sc.Bytes()...)
	var env Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		s.err = fmt.Errorf("line %d is not a JSON record: %v", s.n, err)
		return false
	}
	s.line = Line{Envelope: env, Raw: raw, Hash: Hash(raw)}
	return true
}

// Line is the line Scan read.
func (s *Scanner) Line() Line { return s.line }

// Lines is how many lines Scan has read.
func (s *Scanner) Lines() int { return s.n }

// Err is why Scan stopped, nil at the end of a transcript whose last line
// ends in a newline. A reader's own error is wrapped.
func (s *Scanner) Err() error { return s.err }

func (s *Scanner) scanErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errNoNewline):
		return fmt.Errorf("line %d does not end in a newline: the transcript was cut short", s.n+1)
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("line %d is longer than %d bytes", s.n+1, s.max)
	}
	return fmt.Errorf("line %d: %w", s.n+1, err)
}

// VerifyChain checks the hash chain and the record order: a header first, turns,
// and one footer last. It names the first line that breaks.
func VerifyChain(lines []Line) error {
	var c Chain
	for _, l := range lines {
		if err := c.Next(l); err != nil {
			return err
		}
	}
	return c.End()
}

// Limits bound a transcript read from a source that is not trusted to be
// small (VerifyStream).
type Limits struct {
	Lines     int // the most lines, header and footer included
	LineBytes int // the longest line (at most MaxLine; 0: MaxLine)
}

// VerifyStream checks the hash chain and record order of the transcript r
// holds as VerifyChain does, a line at a time: it holds one line in memory,
// stops at the first line that breaks the chain, and refuses a transcript
// longer than lim allows as soon as it reads past it. It is the check to
// make before a transcript from elsewhere is read whole.
func VerifyStream(r io.Reader, lim Limits) error {
	var c Chain
	err := scan(r, lim.LineBytes, func(l Line) error {
		if lim.Lines > 0 && c.n >= lim.Lines {
			return fmt.Errorf("it has more than %d lines, the most its game can have", lim.Lines)
		}
		return c.Next(l)
	})
	if err != nil {
		return err
	}
	return c.End()
}

// Chain checks a transcript's lines one at a time, as they are read: each
// links to the one before it, in sequence, a header first, and a footer
// only last.
type Chain struct {
	n      int    // lines seen
	prev   string // the last line's hash
	footer bool   // the last line seen is a footer
	last   string // its type
}

// Next checks the next line; its error names the line that breaks.
func (c *Chain) Next(l Line) error {
	i, n := c.n, c.n+1
	if c.footer {
		return fmt.Errorf("line %d is a footer but lines follow it", i)
	}
	if l.Seq != i {
		return fmt.Errorf("line %d: seq is %d, want %d (a line was dropped, inserted or moved)", n, l.Seq, i)
	}
	if l.Prev != c.prev {
		return fmt.Errorf("line %d was edited: it no longer hashes to the prev that line %d records (%.12s, now %.12s)", n-1, n, l.Prev, c.prev)
	}
	switch {
	case i == 0 && l.Type != TypeHeader:
		return fmt.Errorf("line 1 is a %q record, want the header", l.Type)
	case i > 0 && l.Type == TypeHeader:
		return fmt.Errorf("line %d is a second header", n)
	case l.Type != TypeHeader && l.Type != TypeTurn && l.Type != TypeFooter:
		return fmt.Errorf("line %d has unknown type %q", n, l.Type)
	}
	c.n, c.prev, c.footer, c.last = n, l.Hash, l.Type == TypeFooter, l.Type
	return nil
}

// End checks that the transcript read so far is whole: it ends in a footer.
func (c *Chain) End() error {
	switch {
	case c.n == 0:
		return errors.New("the transcript is empty")
	case !c.footer:
		return fmt.Errorf("the transcript ends without a footer (line %d is a %q record): it was cut short", c.n, c.last)
	}
	return nil
}

// ReadFile reads and chain-verifies a transcript file.
func ReadFile(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // read only: nothing to lose if closing fails
	lines, err := Read(f)
	if err != nil {
		return lines, err
	}
	return lines, VerifyChain(lines)
}
