package local

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// scriptBot answers "ok" in move.json per turn and echoes lines as a session.
var scriptBot = sandbox.Program{Name: "script", Entry: "bot", Files: []sandbox.File{{Name: "bot", Mode: 0o755,
	Data: []byte("#!/bin/sh\nif [ \"$1\" = session ]; then while read l; do echo \"got $l\"; done; fi\necho ok > move.json\n")}}}

var okTurn = sandbox.Turn{Remove: []string{"move.json"}, Collect: "move.json", CollectMax: 64}

// openBox opens a box of scriptBot with lim, closed when the test ends.
func openBox(t *testing.T, lim sandbox.Limits) *box {
	t.Helper()
	b := &Backend{Dir: t.TempDir()}
	bx, err := b.Open(context.Background(), sandbox.Spec{Program: scriptBot, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bx.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return bx.(*box)
}

// limits are short turns for the tests.
func limits() sandbox.Limits {
	l := sandbox.DefaultLimits()
	l.TurnTimeout = 5 * time.Second
	return l
}

// wantFault fails the test unless err is a sandbox fault whose message holds
// every one of want.
func wantFault(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	var f *sandbox.Fault
	if !errors.As(err, &f) {
		t.Fatalf("%s: got %v, want a sandbox fault", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: got %q, want it to say %q", what, err, w)
		}
	}
}

// breakScratch puts a file where the scratch directory is, so that it cannot
// be wiped; the returned function puts the directory back.
func breakScratch(t *testing.T, bx *box) (restore func()) {
	t.Helper()
	if err := os.RemoveAll(bx.scratch()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bx.scratch(), []byte("left by a bot"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(bx.scratch()); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(bx.scratch(), 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAnOpenFilesLimitThatCannotBeSetIsAFault(t *testing.T) {
	lim := limits()
	lim.OpenFiles = math.MaxInt64 // above fs.nr_open: the kernel refuses it to anyone
	bx := openBox(t, lim)
	_, err := bx.Run(context.Background(), okTurn)
	wantFault(t, "run", err, "RLIMIT_NOFILE")

	if err := bx.Reset(context.Background()); err != nil {
		t.Fatalf("reset: %v", err)
	}
	_, err = bx.StartSession(context.Background(), []string{"session"})
	var sf *sandbox.StartFailure
	if errors.As(err, &sf) {
		t.Fatalf("start session: a limit we could not set is charged to the bot: %v", err)
	}
	wantFault(t, "start session", err, "RLIMIT_NOFILE")
}

func TestAFailedTurnWipeKeepsBotsOutUntilAReset(t *testing.T) {
	bx := openBox(t, limits())
	ctx := context.Background()
	restore := breakScratch(t, bx)
	_, err := bx.Run(ctx, okTurn)
	wantFault(t, "the turn whose wipe failed", err, "wipe "+bx.scratch())

	_, err = bx.Run(ctx, okTurn)
	wantFault(t, "the next turn", err, "until a reset succeeds", "wipe "+bx.scratch())
	_, err = bx.StartSession(ctx, []string{"session"})
	wantFault(t, "a session", err, "until a reset succeeds")

	if err := bx.Reset(ctx); err == nil {
		t.Fatal("a reset that could not wipe the scratch directory succeeded")
	}
	restore()
	if err := bx.Reset(ctx); err != nil {
		t.Fatalf("reset: %v", err)
	}
	rep, err := bx.Run(ctx, okTurn)
	if err != nil || string(rep.Answer.Data) != "ok\n" {
		t.Fatalf("a turn after a good reset: got answer %q, error %v", rep.Answer.Data, err)
	}
}

func TestAFailedSessionWipeIsReportedAndKeepsBotsOut(t *testing.T) {
	bx := openBox(t, limits())
	ctx := context.Background()
	s, err := bx.StartSession(ctx, []string{"session"})
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := s.Ask(ctx, "hi", 5*time.Second); err != nil || ex.Line != "got hi" {
		t.Fatalf("ask: got %+v, error %v", ex, err)
	}
	restore := breakScratch(t, bx)
	_, err = s.Stop(ctx)
	wantFault(t, "stop", err, "wipe "+bx.scratch())

	_, err = bx.Run(ctx, okTurn)
	wantFault(t, "a turn after the failed wipe", err, "until a reset succeeds")
	_, err = bx.StartSession(ctx, []string{"session"})
	wantFault(t, "a session after the failed wipe", err, "until a reset succeeds")

	restore()
	if err := bx.Reset(ctx); err != nil {
		t.Fatalf("reset: %v", err)
	}
	if _, err := bx.Run(ctx, okTurn); err != nil {
		t.Fatalf("a turn after a good reset: %v", err)
	}
}

func TestStartSessionStopsTheSessionItReplacesFirst(t *testing.T) {
	bx := openBox(t, limits())
	ctx := context.Background()
	if _, err := bx.StartSession(ctx, []string{"session"}); err != nil {
		t.Fatal(err)
	}
	restore := breakScratch(t, bx)
	_, err := bx.StartSession(ctx, []string{"session"})
	wantFault(t, "replacing a session whose wipe fails", err, "wipe "+bx.scratch())
	if bx.sess != nil {
		t.Error("a session runs after the failed replacement")
	}
	restore()
}
