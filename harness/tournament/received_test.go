package tournament

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules/codeclash"
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
func TestATranscriptIsJudgedALineAtATimeWithinItsGamesLength(t *testing.T) {
	t.Parallel()
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
		{"three million lines", huge.String(), "line 2", 64 << 20},
		{"more lines than its game has", chained(maxTurns(want) + 3), "more than 86 lines", 8 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			archive := tarOf(t, [2]string{transcript.FileName, c.transcript}, [2]string{match.ResultFile, `{"winner":"white"}`})
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
			wantKept := []string{match.ResultFile, transcript.FileName}
			if len(c.transcript) > keptWhole {
				wantKept = []string{match.ResultFile, rejectedManifest}
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
