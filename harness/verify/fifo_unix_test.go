//go:build unix

package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/verify"
)

// A named pipe in the bundle, as its checkpoint or as a game's transcript,
// is refused at once: it is never opened in a way that waits for a writer.
func TestANamedPipeIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	game := event.LogEntry{Kind: event.LogGame, Game: &event.LoggedGame{ID: 1, White: "aa", Black: "bb", Seed: 1, Winner: "white", Dir: "final/games/1"}}
	dir, key := bundle(t, append(final(1), game)...)
	pipe := filepath.Join(dir, "final", "games", "1", transcript.FileName)
	if err := os.MkdirAll(filepath.Dir(pipe), 0o755); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, pipe)
	_, err := promptly(t, func(ctx context.Context) (*verify.Result, error) {
		return verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key})
	})
	if want := "final/games/1/transcript.jsonl is not a regular file (a named pipe)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a transcript that is a named pipe: %v, want %q", err, want)
	}
	checkpoint := filepath.Join(dir, "log", "checkpoint")
	if err := os.Remove(checkpoint); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, checkpoint)
	_, err = promptly(t, func(ctx context.Context) (*verify.Result, error) {
		return verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key})
	})
	if want := "log/checkpoint is not a regular file"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a checkpoint that is a named pipe: %v, want %q", err, want)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}
