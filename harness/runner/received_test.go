package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox/local"
)

// tarOf packs files (name, content) as a worker would.
func tarOf(t testing.TB, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// chained is n transcript lines that link as a chain does (a header, then
// turns), with nothing else in them.
func chained(n int) string {
	var b strings.Builder
	prev := ""
	for i := range n {
		typ := transcript.TypeTurn
		if i == 0 {
			typ = transcript.TypeHeader
		}
		l := fmt.Sprintf(`{"type":%q,"seq":%d,"prev":%q}`, typ, i, prev)
		b.WriteString(l + "\n")
		prev = transcript.Hash([]byte(l))
	}
	return b.String()
}

// A transcript a worker hands in is checked a line at a time before it is
// read whole: three million lines broken at the second are refused at
// once, with a few MiB allocated (the whole file read first took 1.09 GB
// and 6.5 s), and a chain longer than the game's most turns is refused as
// such. Either way its worker lied, and what is kept aside of it is a
// manifest once it is larger than an honest transcript can be.
//
// Not parallel: what it measures, the allocations of the whole process,
// would count those of the tests beside it (20 MiB of a 16 MiB bound once).
func TestATranscriptIsJudgedALineAtATimeWithinItsGamesLength(t *testing.T) {
	o := &Options{}
	want := match.Config{Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "20"}}
	r := distrib.Result{Game: 1, Attempt: 1, Worker: "w1"}

	var huge strings.Builder
	huge.WriteString(chained(1))
	for range 3_000_000 {
		huge.WriteString("{}\n")
	}
	for _, c := range []struct {
		name, transcript, why string
		maxAlloc              uint64
	}{
		{"three million lines", huge.String(), "line 2", 16 << 20},
		{"more lines than its game has", chained(maxTurns(want) + 3), "more than 86 lines", 8 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			archive := tarOf(t, [2]string{transcript.FileName, c.transcript}, [2]string{transcript.ResultFile, `{"winner":"white"}`})
			games := t.TempDir()
			dir := filepath.Join(games, "game-1")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, refused, lie, err := o.received(dir, want, Facts{}, r, bytes.NewReader(archive))
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if !lie || !strings.Contains(refused, "its transcript does not hold") || !strings.Contains(refused, c.why) {
				t.Fatalf("refused %q (a lie: %v), want its transcript refused at %q", refused, lie, c.why)
			}
			// Under -race or beside other tests the figure is larger than
			// alone; the whole file read first allocated about a gigabyte.
			t.Logf("%d bytes of transcript refused with %d KiB allocated", len(c.transcript), (after.TotalAlloc-before.TotalAlloc)>>10)
			if got := after.TotalAlloc - before.TotalAlloc; got > c.maxAlloc {
				t.Errorf("judging it allocated %d MiB, want at most %d", got>>20, c.maxAlloc>>20)
			}
			kept, err := filepath.Glob(filepath.Join(games, "game-1.rejected-w1", "*"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, k := range kept {
				if fi, err := os.Stat(k); err == nil && !fi.IsDir() {
					names = append(names, filepath.Base(k))
				}
			}
			wantKept := []string{transcript.ResultFile, transcript.FileName}
			if len(c.transcript) > keptWhole {
				wantKept = []string{transcript.ResultFile, rejectedManifest}
			}
			slices.Sort(names)
			slices.Sort(wantKept)
			if strings.Join(names, " ") != strings.Join(wantKept, " ") {
				t.Fatalf("kept aside %v, want %v", names, wantKept)
			}
			if len(c.transcript) > keptWhole {
				m, err := os.ReadFile(filepath.Join(games, "game-1.rejected-w1", rejectedManifest))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(m), fmt.Sprintf("%q\t%d\t", transcript.FileName, len(c.transcript))) {
					t.Fatalf("the manifest does not list the transcript with its size:\n%s", m)
				}
			}
		})
	}
}

// honestArchive is a game played and packed by an enrolled worker's
// harness on the local sandbox, with what the coordinator judges it
// against: the options (the worker's key), the job and the sandbox facts.
func honestArchive(tb testing.TB) (*Options, match.Config, Facts, []byte, transcript.Result) {
	tb.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		tb.Fatal(err)
	}
	bots := []*submission.Bot{fixtureBot(tb, "legal"), fixtureBot(tb, "shuffle")}
	o := options(tb, tb.TempDir(), bots, &local.Backend{Dir: tb.TempDir()}, "local")
	o.Config.Rules = map[string]string{"maxPlies": "20"}
	pub := transcript.PublicKeyHex(key)
	o.WorkerKey = func(w string) (string, error) {
		if w != "w1" {
			return "", fmt.Errorf("worker %s is not enrolled", w)
		}
		return pub, nil
	}
	want := o.MatchConfig(tournament.Record{Game: tournament.Game{ID: 1, White: 0, Black: 1, Seed: 3}}, "", "")
	sp, err := json.Marshal(specOf(want, "w", "b"))
	if err != nil {
		tb.Fatal(err)
	}
	tw := &Worker{Backend: &local.Backend{Dir: tb.TempDir()}, Scratch: tb.TempDir(), Signer: key,
		bots: map[string]*submission.Bot{"w": bots[0], "b": bots[1]}}
	archive, err := tw.Play(context.Background(), distrib.Job{Game: 1, Attempt: 1, Spec: sp})
	if err != nil {
		tb.Fatal(err)
	}
	facts := Facts{Sandbox: "local"}
	res, refused, lie, err := o.received(filepath.Join(tb.TempDir(), "g"), want, facts, distrib.Result{Game: 1, Attempt: 1, Worker: "w1"}, bytes.NewReader(archive))
	if err != nil || refused != "" || lie {
		tb.Fatalf("the honest archive is refused: %v %q %v", err, refused, lie)
	}
	return &o, want, facts, archive, res
}

// Whatever a worker's archive holds, judging it never fails the run (only
// the coordinator's own disk may) and never counts a result other than
// the game's: an archive with any byte changed is refused, or is the
// honest game itself.
func FuzzAWorkersArchive(f *testing.F) {
	o, want, facts, archive, honest := honestArchive(f)
	f.Add(archive, uint(0), byte(0))
	for _, at := range []string{`"winner"`, `"prev"`, `"signature"`, `"answer"`, `"ply"`, "ustar"} {
		if i := bytes.Index(archive, []byte(at)); i >= 0 {
			f.Add(archive, uint(i+len(at)+2), byte('x'))
		}
	}
	f.Add([]byte("not a tar archive"), uint(0), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, at uint, b byte) {
		if len(data) > 0 {
			data = bytes.Clone(data)
			data[at%uint(len(data))] ^= b
		}
		res, refused, lie, err := o.received(filepath.Join(t.TempDir(), "g"), want, facts, distrib.Result{Game: 1, Attempt: 1, Worker: "w1"}, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("judging an archive failed the run: %v", err)
		}
		if refused == "" && !lie && (res.Winner != honest.Winner || res.Reason != honest.Reason || res.Plies != honest.Plies) {
			t.Fatalf("an archive counts %s (%s, %d plies), the game was %s (%s, %d plies)", res.Winner, res.Reason, res.Plies, honest.Winner, honest.Reason, honest.Plies)
		}
	})
}

// paxRecord is one record of a PAX extended header: its length, itself.
func paxRecord(k, v string) string {
	s := " " + k + "=" + v + "\n"
	for d := 1; ; d++ {
		if n := len(s) + d; len(strconv.Itoa(n)) == d {
			return strconv.Itoa(n) + s
		}
	}
}

// sparseTar is an archive of a few KB whose one entry, name, is a GNU
// sparse file of size bytes, all of them a hole: archive/tar reads it back
// as that many NULs, and will not write one, so its extended header is
// written as a regular file's and its type byte set by hand.
func sparseTar(t *testing.T, name string, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	pax := paxRecord("GNU.sparse.major", "1") + paxRecord("GNU.sparse.minor", "0") + paxRecord("GNU.sparse.name", name) + paxRecord("GNU.sparse.realsize", strconv.FormatInt(size, 10))
	if err := tw.WriteHeader(&tar.Header{Name: "PaxHeaders/x", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(pax))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(pax)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	block := buf.Bytes()[:512]
	block[156] = tar.TypeXHeader
	copy(block[148:156], "        ")
	sum := 0
	for _, c := range block {
		sum += int(c)
	}
	copy(block[148:156], fmt.Sprintf("%06o\x00 ", sum))
	sparseMap := fmt.Sprintf("1\n%d\n0\n", size) // one data region, empty, at the end
	sparseMap += strings.Repeat("\x00", 512-len(sparseMap))
	if err := tw.WriteHeader(&tar.Header{Name: "x", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(sparseMap))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(sparseMap)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An archive of 3 KB that a tar reader expands to 500 MB of NULs (a
// sparse entry's hole) is refused as soon as it unpacks to more than it
// holds: a worker's archive holds every byte it unpacks to. Whole, it
// wrote a file of 512 MiB at each suspension.
func TestAnArchiveUnpacksToNoMoreThanItHolds(t *testing.T) {
	t.Parallel()
	archive := sparseTar(t, transcript.FileName, 500<<20)
	if h, err := tar.NewReader(bytes.NewReader(archive)).Next(); err != nil || h.Size != 500<<20 || h.Typeflag != tar.TypeReg {
		t.Fatalf("the archive does not read as a 500 MiB file: %+v %v", h, err)
	}
	dir := filepath.Join(t.TempDir(), "g")
	err := unpack(bytes.NewReader(archive), dir)
	if err == nil || !strings.Contains(err.Error(), "more than it holds") {
		t.Fatalf("unpacking the sparse archive: %v, want it refused as unpacking to more than it holds", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, transcript.FileName)); err == nil && fi.Size() > 1<<20 {
		t.Fatalf("%d bytes written before it was refused", fi.Size())
	}
}
