package replay

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

func bot(t *testing.T, pkg, name string) *submission.Bot {
	t.Helper()
	data, err := os.ReadFile(gobuild.MustStatic(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	os.WriteFile(p, data, 0o755)
	b, err := submission.Load(p, submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var testKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))

// played runs a real match with the local backend and returns its directory.
func played(t *testing.T, white, black *submission.Bot, policy match.Policy, signer ed25519.PrivateKey) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "m")
	lim := sandbox.DefaultLimits()
	res, err := match.Run(context.Background(), match.Config{
		Game: codeclash.Game{}, Seed: 5, White: white, Black: black,
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: lim, OnFault: policy, Dir: dir, Signer: signer,
	})
	if err != nil || res.Reason == transcript.ReasonAborted {
		t.Fatalf("%v %+v", err, res)
	}
	return dir
}

func TestReplayOfARealMatchIsConsistent(t *testing.T) {
	t.Parallel()
	dir := played(t, bot(t, "./examples/random", "random"), bot(t, "./examples/greedy", "greedy"), match.Forfeit, testKey)
	rep, err := File(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Consistent {
		t.Fatalf("inconsistent: %s", rep.Problem())
	}
	if rep.Turns == 0 || rep.Blobs == 0 || rep.SignedBy != transcript.KeyID(transcript.PublicKeyHex(testKey)) {
		t.Fatalf("%+v", rep)
	}
}

func TestReplayFollowsRandomMoveSubstitutions(t *testing.T) {
	t.Parallel()
	white := bot(t, "./examples/random", "random")
	black := bot(t, "./internal/testbots/ccfixture", "late-fault")
	dir := played(t, white, black, match.RandomMove, nil)
	rep, err := File(dir)
	if err != nil || !rep.Consistent || len(rep.Result.Faults) == 0 {
		t.Fatalf("%v %s %+v", err, rep.Problem(), rep.Result)
	}
}

func readLines(t *testing.T, dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}

func writeLines(t *testing.T, dir string, lines []string) {
	out := strings.Join(lines, "")
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	os.WriteFile(filepath.Join(dir, transcript.FileName), []byte(out), 0o644)
}

// rechain recomputes every prev hash, as a careful forger would.
func rechain(lines []string) []string {
	out := make([]string, len(lines))
	prev := ""
	for i, l := range lines {
		var m map[string]json.RawMessage
		json.Unmarshal([]byte(strings.TrimSpace(l)), &m)
		old, _ := json.Marshal(m["prev"])
		fixed := strings.Replace(strings.TrimSpace(l), `"prev":`+string(old), `"prev":"`+prev+`"`, 1)
		out[i] = fixed + "\n"
		prev = transcript.Hash([]byte(fixed))
	}
	return out
}

// turnLine finds the first turn line whose answer holds the substring.
func turnLine(lines []string, sub string) int {
	for i, l := range lines {
		if strings.Contains(l, `"type":"turn"`) && strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

func TestTamperingIsDetectedAndNamed(t *testing.T) {
	t.Parallel()
	white, black := bot(t, "./examples/random", "random"), bot(t, "./examples/greedy", "greedy")
	signed := played(t, white, black, match.Forfeit, testKey)
	unsigned := played(t, white, black, match.Forfeit, nil)
	copyDir := func(src string) string {
		dst := filepath.Join(t.TempDir(), "copy")
		os.MkdirAll(filepath.Join(dst, transcript.BlobDir), 0o755)
		os.WriteFile(filepath.Join(dst, transcript.FileName), must(os.ReadFile(filepath.Join(src, transcript.FileName))), 0o644)
		blobs, _ := os.ReadDir(filepath.Join(src, transcript.BlobDir))
		for _, b := range blobs {
			os.WriteFile(filepath.Join(dst, transcript.BlobDir, b.Name()), must(os.ReadFile(filepath.Join(src, transcript.BlobDir, b.Name()))), 0o644)
		}
		return dst
	}
	editMove := func(lines []string) []string {
		// Change the row the bot moved to in its first play answer.
		i := turnLine(lines, `"phase":"play"`)
		a := strings.Index(lines[i], `"answer":"`)
		k := a + strings.Index(lines[i][a:], `\"to\":[`) + len(`\"to\":[`)
		d := lines[i][k]
		lines[i] = lines[i][:k] + string('0'+(d-'0'+2)%5) + lines[i][k+1:]
		return lines
	}
	cases := []struct {
		name string
		src  string
		edit func([]string) []string
		want string
	}{
		{"a move byte edited", unsigned, editMove, "hash chain: line"},
		{"a move byte edited and the chain recomputed", unsigned, func(l []string) []string { return rechain(editMove(l)) }, "recorded"},
		{"a move byte edited and the chain recomputed, signed", signed, func(l []string) []string { return rechain(editMove(l)) }, "signature: the footer's signature does not match"},
		{"a time edited", unsigned, func(l []string) []string {
			i := turnLine(l, `"wallMs":`)
			l[i] = strings.Replace(l[i], `"wallMs":`, `"wallMs":1`, 1)
			return l
		}, "hash chain: line"},
		{"a time edited and the chain recomputed, signed", signed, func(l []string) []string {
			i := turnLine(l, `"wallMs":`)
			l[i] = strings.Replace(l[i], `"wallMs":`, `"wallMs":1`, 1)
			return rechain(l)
		}, "signature"},
		{"a line dropped", unsigned, func(l []string) []string { return append(l[:3:3], l[4:]...) }, "seq is 4, want 3"},
		{"two lines swapped", unsigned, func(l []string) []string { l[3], l[4] = l[4], l[3]; return l }, "seq is 4, want 3"},
		{"the footer's result edited", unsigned, func(l []string) []string {
			n := len(l) - 1
			l[n] = strings.Replace(l[n], `"winner":"black"`, `"winner":"white"`, 1)
			l[n] = strings.Replace(l[n], `"winner":"white","reason":"king`, `"winner":"white","reason":"king`, 1)
			return l
		}, "result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(c.src)
			writeLines(t, dir, c.edit(readLines(t, dir)))
			rep, err := File(dir)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Consistent || !strings.Contains(rep.Problem(), c.want) {
				t.Fatalf("problem %q, want it to mention %q", rep.Problem(), c.want)
			}
		})
	}
	t.Run("a data-file blob swapped", func(t *testing.T) {
		dir := copyDir(unsigned)
		blobs, _ := os.ReadDir(filepath.Join(dir, transcript.BlobDir))
		a, b := blobs[0].Name(), blobs[1].Name()
		da, db := must(os.ReadFile(filepath.Join(dir, transcript.BlobDir, a))), must(os.ReadFile(filepath.Join(dir, transcript.BlobDir, b)))
		os.WriteFile(filepath.Join(dir, transcript.BlobDir, a), db, 0o644)
		os.WriteFile(filepath.Join(dir, transcript.BlobDir, b), da, 0o644)
		rep, _ := File(dir)
		if rep.Consistent || !strings.Contains(rep.Tampered, "holds other content") {
			t.Fatalf("problem %q", rep.Problem())
		}
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestRerunReproducesADeterministicBot(t *testing.T) {
	t.Parallel()
	white, black := bot(t, "./examples/random", "random"), bot(t, "./examples/greedy", "greedy")
	dir := played(t, white, black, match.Forfeit, nil)
	be := &local.Backend{Dir: t.TempDir()}
	// A play turn late in the game: its data file holds the bot's whole history.
	rep, _ := File(dir)
	ply := rep.Turns - 1
	_, at, data, err := FindTurn(dir, ply)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		t.Fatalf("no data file to restore at ply %d", ply)
	}
	b := white
	if at.Turn.Side == "black" {
		b = black
	}
	out, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: ply, Bot: b, Backend: be, Repeat: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range out.Attempts {
		if a.Move != out.Recorded.Move || a.Verdict != out.Recorded.Verdict || a.Answer != *out.Recorded.Answer {
			t.Fatalf("run %d: %+v, recorded %s %s", i+1, a, out.Recorded.Move, out.Recorded.Verdict)
		}
	}
	other := black
	if b == black {
		other = white
	}
	if _, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: ply, Bot: other, Backend: be}); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("a different bot was accepted: %v", err)
	}
	wrong := "white"
	if at.Turn.Side == "white" {
		wrong = "black"
	}
	if _, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: ply, Side: wrong, Bot: b, Backend: be}); err == nil {
		t.Fatal("the wrong side was accepted")
	}
	if _, _, _, err := FindTurn(dir, 9999); err == nil || !strings.Contains(err.Error(), "not in the transcript") {
		t.Fatalf("ply 9999: %v", err)
	}
}

// A turn whose data file was not kept (the organizer's evidence policy) is
// refused with the reason and the turns that can be run again, which do.
func TestATurnWithoutItsDataFileIsRefusedWithTheTurnsThatCanBe(t *testing.T) {
	t.Parallel()
	white, black := bot(t, "./examples/random", "random"), bot(t, "./examples/greedy", "greedy")
	dir := filepath.Join(t.TempDir(), "m")
	res, err := match.Run(context.Background(), match.Config{
		Game: codeclash.Game{}, Seed: 5, White: white, Black: black, Evidence: transcript.Evidence{Keep: transcript.KeepFinal},
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Dir: dir,
	})
	if err != nil || res.Reason == transcript.ReasonAborted {
		t.Fatalf("%v %+v", err, res)
	}
	can, err := Rerunnable(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := File(dir)
	// Each side's first two turns began with no data file or with one kept
	// to the end only if unchanged: at least the first two plies can be run.
	if len(can) < 2 || can[0] != 1 || can[1] != 2 || len(can) == rep.Turns {
		t.Fatalf("rerunnable %v of %d turns", can, rep.Turns)
	}
	var refused int
	for ply := 1; ply <= rep.Turns; ply++ {
		if slices.Contains(can, ply) {
			continue
		}
		refused = ply
		break
	}
	_, at, _, _ := FindTurn(dir, refused)
	b := white
	if at.Turn.Side == "black" {
		b = black
	}
	_, err = RunAgain(context.Background(), RerunOptions{Path: dir, Ply: refused, Bot: b, Backend: &local.Backend{Dir: t.TempDir()}})
	var u *UnrerunnableError
	if !errors.As(err, &u) || u.Ply != refused || !slices.Equal(u.Rerunnable, can) || !strings.Contains(err.Error(), "evidence policy: final") ||
		!strings.Contains(err.Error(), "the turns that can be run again: "+Ranges(can)) {
		t.Fatalf("ply %d: %v", refused, err)
	}
	if _, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: 1, Bot: white, Backend: &local.Backend{Dir: t.TempDir()}}); err != nil {
		t.Fatalf("ply 1: %v", err)
	}
	if got := Ranges([]int{1, 2, 3, 5, 7, 8}); got != "1-3, 5, 7-8" {
		t.Errorf("ranges: %s", got)
	}
}

// A published copy (Redact) is replayed as it is read, a line at a time,
// to the same report as the whole transcript; a redacted line may hide
// what Redact cut but nothing it keeps: one that names data files was not
// made by it and is refused, and a copy cut short is an error of its
// reading.
func TestAPublishedCopyReplaysAsItIsRead(t *testing.T) {
	t.Parallel()
	dir := played(t, bot(t, "./examples/random", "random"), bot(t, "./examples/greedy", "greedy"), match.Forfeit, testKey)
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	whole := Lines(lines, dir, nil)
	pub, err := transcript.Redact(lines, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Published(bytes.NewReader(pub))
	if err != nil || !rep.Consistent || rep.Turns != whole.Turns || rep.Result.Winner != whole.Result.Winner || rep.SignedBy == "" || rep.Head != lines[len(lines)-1].Hash || rep.Head != whole.Head {
		t.Fatalf("the published copy of a real match: %+v %v; whole %+v", rep, err, whole)
	}
	// A redacted turn given a data file: its chain still holds (the mark
	// names its hash), its content is not what Redact leaves.
	split := bytes.SplitAfter(pub, []byte("\n"))
	var edited bytes.Buffer
	added := false
	for _, l := range split {
		if !added && bytes.Contains(l, []byte(`"type":"turn"`)) && bytes.Contains(l, []byte(`"redacted"`)) {
			l = bytes.Replace(l, []byte(`{`), []byte(`{"dataFiles":[{"name":"x","sha256":"../../../etc/passwd","size":1}],`), 1)
			added = true
		}
		edited.Write(l)
	}
	if !added {
		t.Fatal("no redacted turn in the published copy")
	}
	rep, err = Published(&edited)
	if err != nil || rep.Consistent || !strings.Contains(rep.Tampered, "it names data files, which a published transcript leaves out") {
		t.Errorf("a published turn naming a data file: %+v %v", rep, err)
	}
	rep, err = Published(bytes.NewReader(pub[:len(pub)-1]))
	if err == nil || !strings.Contains(err.Error(), "does not end in a newline: the transcript was cut short") {
		t.Errorf("a published copy cut short: %+v %v", rep, err)
	}
}
