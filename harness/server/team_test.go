package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// The site offers teams the team's build of arena where it is found, and the
// server's own executable only when it is not.
func TestTheSiteOffersTheTeamsArena(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Setenv("PATH", t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got := teamArena(log); got != self {
		t.Errorf("with no %s anywhere the site offers %q, want the server's own %q", TeamBinary, got, self)
	}
	dir := t.TempDir()
	team := filepath.Join(dir, TeamBinary)
	if err := os.WriteFile(team, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if got := teamArena(log); got != team {
		t.Errorf("with %s in PATH the site offers %q", team, got)
	}
}
