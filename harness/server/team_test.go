package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/sandbox"
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

// The organizer's page says where games play without workers: in Pods on
// the cluster, in Docker containers here (under which runtime), or as
// plain processes.
func TestWhereGamesPlayIsSaid(t *testing.T) {
	for _, c := range []struct {
		sb   sandbox.Config
		want string
	}{
		{sandbox.Config{Kind: "kubernetes", Cluster: sandbox.Cluster{Namespace: "cup"}}, "in Pods on the cluster (namespace cup)"},
		{sandbox.Config{Kind: "kubernetes"}, "in Pods on the cluster (namespace arena)"},
		{sandbox.Config{Kind: "docker", Runtime: "runsc"}, "on this machine, in Docker containers under runsc"},
		{sandbox.Config{}, "on this machine, in Docker containers"},
		{sandbox.Config{Kind: "local"}, "on this machine, as plain processes (the local sandbox: no isolation)"},
	} {
		if got := playsOn(c.sb); got != c.want {
			t.Errorf("%+v: %q, want %q", c.sb, got, c.want)
		}
	}
}
