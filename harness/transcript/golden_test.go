package transcript

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/golden"
	"github.com/arenabots/arena/sandbox"
)

// Every value below is set and none comes from a clock, so the golden files
// change exactly when the format does.

func testKey() ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
}

func goldenResult() Result {
	return Result{
		Game:   "codeclash",
		White:  BotRef{Name: "random", SHA256: strings.Repeat("a1", 32)},
		Black:  BotRef{Name: "greedy", SHA256: strings.Repeat("b2", 32)},
		Winner: WinnerBlack,
		Reason: "timeout",
		Plies:  16,
		Turns:  34,
		Seed:   42,
		Faults: []Fault{{Ply: 34, Side: "white", Verdict: "bot-rejected-state", Reason: "the bot says the state is malformed", Review: true}},
		Points: []int{70, 76},
		// Only an aborted match has an abort reason; it is set here so that
		// the golden file holds every key.
		AbortReason: "the engine went away",
		DurationMs:  483.25,
	}
}

func goldenHeader() Header {
	return Header{
		Format:       Format,
		ArenaVersion: "v1.2.3",
		Game:         "codeclash",
		Rules:        map[string]string{"maxPlies": "200", "pawnReset": "true"},
		Seed:         42,
		White:        Bot{Name: "random", SHA256: strings.Repeat("a1", 32), SubmissionSHA256: strings.Repeat("c3", 32), Source: "subs/random.zip", Entry: "arena-run", Language: ".py", Toolchain: "Python 3.12.3"},
		Black:        Bot{Name: "greedy", SHA256: strings.Repeat("b2", 32), SubmissionSHA256: strings.Repeat("d4", 32), Source: "subs/greedy.cpp", Entry: "arena-run", Language: ".cpp", Toolchain: "g++ (Debian 14.2.0-19) 14.2.0"},
		OnFault:      "random-move",
		Protocol:     "files",
		Limits: sandbox.Limits{TurnTimeout: 5 * time.Second, Memory: 1024 * sandbox.MiB, CPUs: 1.5, Pids: 64,
			GameDirBytes: 16 * sandbox.MiB, ScratchBytes: 64 * sandbox.MiB, OutputTail: 8192, OpenFiles: 256, FileSize: 32 * sandbox.MiB},
		Sandbox:     map[string]string{"backend": "docker", "image": "arena-runtime:latest", "imageId": "sha256:" + strings.Repeat("e5", 32)},
		Host:        map[string]string{"hostname": "judge-1", "os": "linux", "cpus": "2"},
		StartedAt:   "2026-03-01T10:00:00Z",
		TimeControl: &TimeControl{MoveTime: 100 * time.Millisecond, GameTime: time.Minute, StartTime: time.Second, LateMove: "random", AutoSingle: true},
		Opening:     &Lines{White: []string{"START", "SIZE 6"}, Black: []string{"START"}},
		Evidence:    &Evidence{Keep: KeepChanged, Budget: 64 << 20},
		SigningKey:  PublicKeyHex(testKey()),
		Job:         &Job{Tournament: "spring-cup", Game: 17, Attempt: 2, Pair: 9, Opening: "ACF 12"},
	}
}

// goldenTurns are a turn of the file protocol and one of the line protocol;
// between them every field is set.
func goldenTurns() (files, lines Turn) {
	state := `{"phase":"setup","turn":1}`
	files = Turn{
		Ply: 1, Side: "white", Phase: "setup", SetupStep: 1, TurnNumber: 1,
		State: state, StateSHA256: Hash([]byte(state)),
		AnswerBase64: "/w==", AnswerType: "symlink", AnswerSize: 70000, AnswerTruncated: true,
		StartError: "exec format error", ExitCode: -1, Signal: 9, TimedOut: true, OOMKilled: true,
		Verdict: "timeout", Reason: "no answer within 5s", Review: true, Move: "place K [0,2]",
		Played: `{"place":"K","at":[0,2]}`, Substituted: true,
		WallMs: 5000.5, HostWaitMs: 0.25, HarnessMs: 5012.25, CPUMs: 4990.75, PeakMemory: 12 * sandbox.MiB, Survivors: 2,
		DataFiles:   []DataFile{{Name: "random-bot.json", Size: 17, SHA256: strings.Repeat("f6", 32), NotKept: true, Mode: "0600"}},
		GameDir:     []sandbox.Entry{{Name: "random-bot.json", Type: sandbox.TypeFile, Size: 17, SHA256: strings.Repeat("f6", 32), Mode: 0o600}},
		StdoutBytes: 10, StderrBytes: 20, StdoutTail: "thinking\n", StderrTail: "panic: no\n",
	}
	answer := "e2e4"
	lines = Turn{
		Ply: 2, Side: "black", Phase: "play", TurnNumber: 2,
		State: "position startpos moves e2e4", StateSHA256: Hash([]byte("position startpos moves e2e4")),
		Answer: &answer, AnswerSize: 4,
		Early: "hello", Late: "e7e5", Exited: true, TooLong: true, Auto: true,
		Before:   &Lines{White: []string{"UPDATE TILE 1 2"}, Black: []string{"UPDATE TILE 6 6"}},
		After:    &Lines{White: []string{"LAID", "TURNOVER"}, Black: []string{"UPDATE DESTROYED 3 4"}},
		ExitCode: 0, Verdict: "ok", Move: "e7e5", Played: "e7e5",
		WallMs: 1.5, HarnessMs: 2.5, CPUMs: 1.25, PeakMemory: 4 * sandbox.MiB,
		GameDir: []sandbox.Entry{},
	}
	return files, lines
}

func goldenFooter() Footer {
	return Footer{
		Result:     goldenResult(),
		FinishedAt: "2026-03-01T10:00:07.5Z",
		Pruned:     []string{strings.Repeat("e5", 32)},
		Sessions: []SessionEnd{
			{Side: "white", ExitCode: -1, Signal: 9, CPUMs: 12.5, PeakMemory: 8 * sandbox.MiB, StderrTail: "bye\n"},
			{Side: "black", ExitCode: 3, CPUMs: 2.5, PeakMemory: 4 * sandbox.MiB},
		},
	}
}

func TestGoldenValuesSetEveryField(t *testing.T) {
	files, lines := goldenTurns()
	for name, missing := range map[string][]string{
		"header": golden.Unset(goldenHeader()),
		"turns":  golden.Unset(files, lines),
		"footer": golden.Unset(goldenFooter()),
		"result": golden.Unset(goldenResult()),
	} {
		if len(missing) > 0 {
			t.Errorf("the golden %s leaves these fields zero, so the golden file would not pin them: %v", name, missing)
		}
	}
}

func TestRecordKeysAreCamelCase(t *testing.T) {
	for _, v := range []any{Envelope{}, Header{}, Turn{}, Footer{}, Result{}, Signature{}} {
		if bad := golden.BadKeys(reflect.TypeOf(v)); len(bad) > 0 {
			t.Errorf("%T: %s", v, strings.Join(bad, "; "))
		}
	}
}

func TestResultJSONGolden(t *testing.T) {
	data, err := EncodeResult(goldenResult())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "result.json.golden", data, "docs/formats.md")
}

func TestTranscriptGolden(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.SetSigner(testKey())
	w.SetProvisional(func() any {
		r := goldenResult()
		r.Winner, r.Reason = WinnerNone, ReasonAborted
		return Footer{Result: r, FinishedAt: "provisional"}
	})
	files, lines := goldenTurns()
	for _, rec := range []struct {
		typ  string
		body any
	}{{TypeHeader, goldenHeader()}, {TypeTurn, files}, {TypeTurn, lines}, {TypeFooter, goldenFooter()}} {
		if err := w.Append(rec.typ, rec.body); err != nil {
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
	got, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(got); err != nil {
		t.Fatal(err)
	}
	if key, err := VerifySignature(got); err != nil || key != PublicKeyHex(testKey()) {
		t.Fatalf("signature: key %q, %v", key, err)
	}
	if len(got) != 4 || bytes.Contains(data, []byte("provisional")) {
		t.Fatalf("%d lines, want the 4 records and no provisional footer:\n%s", len(got), data)
	}
	golden.Check(t, "transcript.jsonl.golden", data, "docs/formats.md")
}
