package referee

import (
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
)

func TestJudgeTurnFollowsTheVerdictTable(t *testing.T) {
	proto := codeclash.Game{}.Protocol().Files
	file := func(name string, size int64) sandbox.Entry {
		return sandbox.Entry{Name: name, Type: sandbox.TypeFile, Size: size, SHA256: "x"}
	}
	answer := func(s string) sandbox.Collected {
		return sandbox.Collected{Present: true, Type: sandbox.TypeFile, Data: []byte(s), Size: int64(len(s))}
	}
	legal := answer(`{"move": {"to": [0, 2]}}`)
	base := func() sandbox.Report {
		return sandbox.Report{Answer: legal, GameDir: []sandbox.Entry{file("state.json", 700), file("move.json", 25)}, Wall: time.Millisecond}
	}
	cases := []struct {
		name    string
		edit    func(*sandbox.Report)
		verdict rules.Verdict
		reason  string
	}{
		{"exit 0 and a legal move", func(r *sandbox.Report) {}, rules.OK, ""},
		{"exit 0 and a data file", func(r *sandbox.Report) { r.GameDir = append(r.GameDir, file("bot.dat", 10<<20)) }, rules.OK, ""},
		{"exit 0, legal JSON, illegal move", func(r *sandbox.Report) { r.Answer = answer(`{"move": {"to": [3, 3]}}`) }, rules.IllegalMove, "not in your own back two rows"},
		{"exit 0, no move.json", func(r *sandbox.Report) { r.Answer = sandbox.Collected{} }, rules.InvalidOutput, "was not written"},
		{"exit 0, not JSON", func(r *sandbox.Report) { r.Answer = answer("hello") }, rules.InvalidOutput, "not valid JSON"},
		{"exit 0, wrong shape", func(r *sandbox.Report) { r.Answer = answer(`{"move": [0, 2]}`) }, rules.InvalidOutput, "must be a JSON object"},
		{"exit 0, over 64 KiB", func(r *sandbox.Report) {
			r.Answer = sandbox.Collected{Present: true, Type: sandbox.TypeFile, Data: make([]byte, 65536), Size: 100 << 20, Truncated: true}
		}, rules.InvalidOutput, "the limit is 65536"},
		{"exit 0, move.json a symlink", func(r *sandbox.Report) {
			r.Answer = sandbox.Collected{Present: true, Type: sandbox.TypeSymlink}
		}, rules.InvalidOutput, "is a symlink"},
		{"exit 1", func(r *sandbox.Report) { r.ExitCode = 1 }, rules.BotRejectedState, "malformed"},
		{"exit 2", func(r *sandbox.Report) { r.ExitCode = 2 }, rules.IllegalMove, "its own move is illegal"},
		{"exit 3", func(r *sandbox.Report) { r.ExitCode = 3 }, rules.BotError, "internal error"},
		{"exit 4", func(r *sandbox.Report) { r.ExitCode = 4 }, rules.Crash, "exit code 4"},
		{"a signal", func(r *sandbox.Report) { r.ExitCode, r.Signal = -1, 11 }, rules.Crash, "signal 11 (segmentation fault)"},
		{"cannot execute", func(r *sandbox.Report) { r.StartError, r.ExitCode = "cannot execute /bot/x: exec format error", -1 }, rules.Crash, "exec format error"},
		{"killed for memory", func(r *sandbox.Report) { r.OOMKilled, r.Signal, r.ExitCode = true, 9, -1 }, rules.OutOfMemory, "memory limit"},
		{"out of memory beats a late timer", func(r *sandbox.Report) { r.OOMKilled, r.TimedOut = true, true }, rules.OutOfMemory, ""},
		{"timed out", func(r *sandbox.Report) { r.TimedOut, r.Signal, r.ExitCode = true, 9, -1 }, rules.Timeout, "time limit"},
		{"two data files", func(r *sandbox.Report) { r.GameDir = append(r.GameDir, file("a", 1), file("b", 1)) }, rules.DataFileViolation, "holds 2 entries"},
		{"a data file of 10 MiB + 1", func(r *sandbox.Report) { r.GameDir = append(r.GameDir, file("a", 10<<20+1)) }, rules.DataFileViolation, "10485761 bytes"},
		{"a directory", func(r *sandbox.Report) {
			r.GameDir = append(r.GameDir, sandbox.Entry{Name: "d", Type: sandbox.TypeDir})
		}, rules.DataFileViolation, "d is a dir"},
		{"a symlink", func(r *sandbox.Report) {
			r.GameDir = append(r.GameDir, sandbox.Entry{Name: "l", Type: sandbox.TypeSymlink})
		}, rules.DataFileViolation, "l is a symlink"},
		{"a FIFO", func(r *sandbox.Report) {
			r.GameDir = append(r.GameDir, sandbox.Entry{Name: "p", Type: sandbox.TypeFIFO})
		}, rules.DataFileViolation, "p is a fifo"},
		{"a data-file violation beats an illegal move", func(r *sandbox.Report) {
			r.GameDir = append(r.GameDir, file("a", 1), file("b", 1))
			r.Answer = answer("junk")
		}, rules.DataFileViolation, ""},
		{"a crash beats a data-file violation", func(r *sandbox.Report) {
			r.GameDir = append(r.GameDir, file("a", 1), file("b", 1))
			r.ExitCode = 3
		}, rules.BotError, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := codeclash.NewState(codeclash.DefaultOptions(), 1)
			r := base()
			c.edit(&r)
			j := JudgeTurn(st, proto, r)
			if j.Verdict != c.verdict {
				t.Fatalf("verdict %s (%s), want %s", j.Verdict, j.Reason, c.verdict)
			}
			if !strings.Contains(j.Reason, c.reason) {
				t.Fatalf("reason %q does not mention %q", j.Reason, c.reason)
			}
			if (c.verdict == rules.BotRejectedState) != j.Review {
				t.Fatalf("review flag %v", j.Review)
			}
		})
	}
}
