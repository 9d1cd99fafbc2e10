package transcript

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

type body struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// sample writes a header, three turns and a footer.
func sample(t *testing.T) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.SetProvisional(func() any { return body{Text: "aborted"} })
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Append(TypeHeader, body{N: 0, Text: "header"}))
	for i := 1; i <= 3; i++ {
		must(w.Append(TypeTurn, body{N: i, Text: "turn"}))
	}
	must(w.Append(TypeFooter, body{N: 4, Text: "done"}))
	must(w.Close())
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return dir, data
}

func verify(data []byte) error {
	lines, err := Read(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return VerifyChain(lines)
}

func TestChainVerifies(t *testing.T) {
	_, data := sample(t)
	if err := verify(data); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 5 {
		t.Fatalf("%d lines, want 5 (the provisional footer must be gone)", n)
	}
}

func TestTamperingIsDetectedAndNamed(t *testing.T) {
	_, data := sample(t)
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[:len(lines)-1] // SplitAfter leaves an empty tail
	join := func(ls []string) []byte { return []byte(strings.Join(ls, "")) }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"one byte edited", join(append(append([]string{}, lines[:2]...), append([]string{strings.Replace(lines[2], `"n":2`, `"n":7`, 1)}, lines[3:]...)...)), "line 3 was edited"},
		{"a line dropped", join(append(append([]string{}, lines[:2]...), lines[3:]...)), "line 3: seq is 3"},
		{"two lines swapped", join([]string{lines[0], lines[2], lines[1], lines[3], lines[4]}), "line 2: seq is 2"},
		{"a line inserted", join([]string{lines[0], lines[1], lines[1], lines[2], lines[3], lines[4]}), "line 3: seq is 1"},
		{"cut short", join(lines[:3]), "ends without a footer"},
		{"not JSON", join([]string{lines[0], "garbage\n"}), "line 2 is not a JSON record"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := verify(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestEveryPrefixEndsInAProvisionalFooter(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetProvisional(func() any { return body{Text: "aborted"} })
	w.Append(TypeHeader, body{})
	for i := 0; i < 3; i++ {
		w.Append(TypeTurn, body{N: i})
		data, _ := os.ReadFile(filepath.Join(dir, FileName))
		if err := verify(data); err != nil {
			t.Fatalf("after turn %d the file is not a complete transcript: %v", i, err)
		}
		if !bytes.Contains(data, []byte(`"type":"footer"`)) || !bytes.Contains(data, []byte("aborted")) {
			t.Fatalf("no provisional footer after turn %d", i)
		}
	}
}

func TestBlobsAreStoredOnceByHash(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a, _, _ := w.PutBlob([]byte("same"))
	b, _, _ := w.PutBlob([]byte("same"))
	c, _, _ := w.PutBlob([]byte("other"))
	if a != b || a == c || !w.HasBlob(a) || w.HasBlob(strings.Repeat("0", 64)) {
		t.Fatalf("hashes %s %s %s", a, b, c)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, BlobDir))
	if len(entries) != 2 {
		t.Fatalf("%d blobs, want 2", len(entries))
	}
}

// A blob that compresses well is stored compressed, one that does not is
// stored as it is; both read back exactly, and a compressed blob that would
// expand past the cap is refused.
func TestBlobsAreCompressedWhenItPays(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, BlobDir), 0o755); err != nil {
		t.Fatal(err)
	}
	text := bytes.Repeat([]byte("opening book line e2e4 e7e5\n"), 40000)
	noise := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(noise)
	for _, c := range []struct {
		data       []byte
		compressed bool
	}{{text, true}, {noise, false}} {
		sum, wrote, err := PutBlob(dir, c.data)
		if err != nil {
			t.Fatal(err)
		}
		_, zerr := os.Stat(filepath.Join(dir, BlobDir, sum+".zst"))
		if (zerr == nil) != c.compressed || (c.compressed && wrote >= int64(len(c.data))/2) {
			t.Fatalf("%d bytes: compressed %v, wrote %d", len(c.data), zerr == nil, wrote)
		}
		got, err := ReadBlob(dir, sum)
		if err != nil || !bytes.Equal(got, c.data) || !HasBlob(dir, sum) {
			t.Fatalf("read back %d bytes, %v", len(got), err)
		}
		if _, again, _ := PutBlob(dir, c.data); again != 0 {
			t.Fatalf("stored twice (%d bytes)", again)
		}
		if err := RemoveBlob(dir, sum); err != nil || HasBlob(dir, sum) {
			t.Fatalf("remove: %v", err)
		}
	}
	bomb := encoder.EncodeAll(make([]byte, MaxBlob+1), nil)
	sum := strings.Repeat("ab", 32)
	if err := os.WriteFile(filepath.Join(dir, BlobDir, sum+".zst"), bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBlob(dir, sum); err == nil {
		t.Fatal("a blob expanding past the cap was read")
	}
	if _, err := ReadBlob(dir, strings.Repeat("cd", 32)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing blob: %v", err)
	}
}

func TestCreateRefusesToOverwrite(t *testing.T) {
	dir, _ := sample(t)
	if _, err := Create(dir); err == nil {
		t.Fatal("Create overwrote an existing transcript")
	}
}

// signedSample writes a signed transcript and returns its bytes.
func signedSample(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.SetSigner(testKey())
	w.SetProvisional(func() any { return body{Text: "aborted"} })
	for i, typ := range []string{TypeHeader, TypeTurn, TypeTurn, TypeFooter} {
		if err := w.Append(typ, body{N: i, Text: typ}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestEveryByteButTheNewlinesIsCovered(t *testing.T) {
	data := signedSample(t)
	check := func(data []byte) error {
		lines, err := Read(bytes.NewReader(data))
		if err != nil {
			return err
		}
		if err := VerifyChain(lines); err != nil {
			return err
		}
		_, err = VerifySignature(lines)
		return err
	}
	if err := check(data); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[:len(lines)-1]
	last := len(lines) - 1
	edit := func(i int, f func(string) string) []byte {
		out := append([]string{}, lines...)
		out[i] = f(out[i])
		return []byte(strings.Join(out, ""))
	}
	sigAt := strings.LastIndex(lines[last], `"sig":"`) + len(`"sig":"`)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"a carriage return on a turn", edit(1, func(l string) string { return strings.TrimSuffix(l, "\n") + "\r\n" }), "line 2 was edited"},
		{"a carriage return on the footer", edit(last, func(l string) string { return strings.TrimSuffix(l, "\n") + "\r\n" }), "signature is malformed"},
		{"a space after the footer", edit(last, func(l string) string { return strings.TrimSuffix(l, "\n") + " \n" }), "signature is malformed"},
		{"a key added to the signature", edit(last, func(l string) string { return strings.Replace(l, `"alg":"ed25519"`, `"note":"x","alg":"ed25519"`, 1) }), "signature is malformed"},
		{"the signature in upper case", edit(last, func(l string) string { return l[:sigAt] + strings.ToUpper(l[sigAt:]) }), "signature is malformed"},
		{"the last newline cut", []byte(strings.TrimSuffix(string(data), "\n")), "line 4 does not end in a newline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if bytes.Equal(c.data, data) {
				t.Fatal("the edit changed nothing")
			}
			if err := check(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestCreateLeavesNothingWhenItFails(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, BlobDir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir); err == nil {
		t.Fatal("Create succeeded with blobs/ a file")
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Fatalf("a failed Create left %s behind (%v)", FileName, err)
	}
}

func TestAppendAfterCloseFails(t *testing.T) {
	w, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(TypeHeader, body{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(TypeTurn, body{}); err == nil {
		t.Fatal("Append after Close succeeded")
	}
}

func TestSigningKeyIsCreatedOnceAndKept(t *testing.T) {
	p := filepath.Join(t.TempDir(), "keys", "arena.key")
	a, err := LoadOrCreateKey(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreateKey(p)
	if err != nil || !a.Equal(b) {
		t.Fatalf("the key changed between runs (%v)", err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v", fi, err)
	}
}

func TestDialogueFollowsTheDeliveryOrder(t *testing.T) {
	a1, a2 := "MOVE U", "LAY"
	h := Header{Opening: &Lines{White: []string{"START", "SIZE 4"}, Black: []string{"START", "SIZE 4"}}}
	turns := []Turn{
		{Ply: 1, Side: "white", State: "TURN", Answer: &a1, After: &Lines{White: []string{"EMPTY", "TURNOVER"}}},
		{Ply: 2, Side: "black", State: "TURN", Answer: &a2, After: &Lines{Black: []string{"LAID", "TURNOVER"}}},
		{Ply: 3, Side: "white", State: "TURN", TimedOut: true, Before: &Lines{White: []string{"UPDATE TILE 1 4"}, Black: []string{"UPDATE TILE 2 1"}},
			After: &Lines{White: []string{"GAMEOVER"}, Black: []string{"GAMEOVER"}}},
	}
	show := func(hs []Heard) string {
		var s []string
		for _, h := range hs {
			s = append(s, h.String())
		}
		return strings.Join(s, "\n")
	}
	for _, c := range []struct {
		side string
		ply  int
		want string
	}{
		{"white", 0, "> START\n> SIZE 4\n? TURN\n< MOVE U\n> EMPTY\n> TURNOVER\n> UPDATE TILE 1 4\n? TURN\n(no answer)\n> GAMEOVER"},
		{"black", 0, "> START\n> SIZE 4\n? TURN\n< LAY\n> LAID\n> TURNOVER\n> UPDATE TILE 2 1\n> GAMEOVER"},
		{"white", 1, "> START\n> SIZE 4\n? TURN\n< MOVE U\n> EMPTY\n> TURNOVER"},
		{"black", 1, "> START\n> SIZE 4"},
	} {
		d, err := Dialogue(h, turns, c.side, c.ply)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(d); got != c.want {
			t.Errorf("%s up to ply %d:\n%s\nwant\n%s", c.side, c.ply, got, c.want)
		}
	}
	if _, err := Dialogue(h, turns, "red", 0); err == nil {
		t.Error("side red accepted")
	}
}

// A data file many matches keep is stored once, linked into each match's
// blobs/, read back as any blob; the store lets it go with the last match.
func TestSharedBlobsAreStoredOnce(t *testing.T) {
	t.Parallel()
	store, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(filepath.Join(d, BlobDir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := bytes.Repeat([]byte("the same data file "), 500)
	sum, grew, err := PutShared(store, a, data)
	if err != nil || grew == 0 || grew >= int64(len(data)) {
		t.Fatalf("first: %s grew %d (%v)", sum, grew, err)
	}
	sum2, grew2, err := PutShared(store, b, data)
	if err != nil || sum2 != sum || grew2 != 0 {
		t.Fatalf("second: %s grew %d (%v)", sum2, grew2, err)
	}
	for _, d := range []string{a, b} {
		got, err := ReadBlob(d, sum)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: %v", d, err)
		}
	}
	links := func() uint64 {
		fi, err := os.Stat(filepath.Join(store, BlobDir, sum+zstdSuffix))
		if err != nil {
			return 0
		}
		return uint64(fi.Sys().(*syscall.Stat_t).Nlink)
	}
	if n := links(); n != 3 {
		t.Fatalf("%d links, want the store's and two matches'", n)
	}
	for i, d := range []string{a, b} {
		if err := RemoveBlob(d, sum); err != nil {
			t.Fatal(err)
		}
		if err := ReleaseShared(store, sum); err != nil {
			t.Fatal(err)
		}
		if held := HasBlob(store, sum); held != (i == 0) {
			t.Fatalf("after %d matches let go, the store holds it: %v", i+1, held)
		}
	}
}

// Matches that share a store may keep the same data file at the same time:
// each gets it whole, and the store writes it once and never replaces it
// (a link to a file a rename has just replaced fails as if it were gone).
func TestSharedBlobsWrittenAtOnce(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("written by many at once "), 3000)
	for range 50 {
		store := t.TempDir()
		start := make(chan struct{})
		errs := make(chan error, 8)
		grew := make(chan int64, 8)
		dirs := make([]string, 8)
		for i := range dirs {
			dirs[i] = t.TempDir()
			if err := os.MkdirAll(filepath.Join(dirs[i], BlobDir), 0o755); err != nil {
				t.Fatal(err)
			}
			go func() {
				<-start
				_, n, err := PutShared(store, dirs[i], data)
				errs <- err
				grew <- n
			}()
		}
		close(start)
		var total int64
		for range dirs {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			total += <-grew
		}
		stored, err := filepath.Glob(filepath.Join(store, BlobDir, Hash(data)+"*"))
		if err != nil || len(stored) != 1 {
			t.Fatalf("the store holds %v (%v), want the blob once", stored, err)
		}
		kept, err := os.Stat(stored[0])
		if err != nil {
			t.Fatal(err)
		}
		// Written once and never replaced: one writer counts its bytes,
		// and every match links that very file.
		if total != kept.Size() {
			t.Errorf("the store grew by %d bytes in all, for a blob of %d", total, kept.Size())
		}
		for _, d := range dirs {
			if got, err := ReadBlob(d, Hash(data)); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s: %v", d, err)
			}
			if linked, err := os.Stat(filepath.Join(d, BlobDir, filepath.Base(stored[0]))); err != nil || !os.SameFile(linked, kept) {
				t.Fatalf("%s holds a blob that is not the store's (%v): the store's was replaced after it was linked", d, err)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(store, BlobDir, "*.tmp")); len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	}
}

// The fault that ended a game is on the turn after the last one applied;
// a fault forgiven with a substitute move (applied) ends nothing.
func TestAForfeitIsTheFaultAfterTheLastTurnApplied(t *testing.T) {
	t.Parallel()
	forfeit := Result{Turns: 2, Faults: []Fault{{Ply: 1, Side: "white", Verdict: "timeout"}, {Ply: 3, Side: "black", Verdict: "invalid-output"}}}
	if f, ok := forfeit.Forfeit(); !ok || f.Side != "black" || forfeit.TurnsPlayed() != 3 {
		t.Errorf("forfeit %+v %v, %d turns played; want black's on turn 3", f, ok, forfeit.TurnsPlayed())
	}
	forgiven := Result{Turns: 5, Faults: []Fault{{Ply: 5, Side: "white", Verdict: "timeout"}}}
	if f, ok := forgiven.Forfeit(); ok || forgiven.TurnsPlayed() != 5 {
		t.Errorf("a substituted fault on the last turn applied: forfeit %+v, %d turns played; want none, 5", f, forgiven.TurnsPlayed())
	}
}
