package services

import (
	"crypto/ed25519"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/sandbox"
)

// Final is how the final is played: the options of arena tournament.
type Final struct {
	Settings settings.Resolved
	Backend  sandbox.Backend
	Image    string
	Builder  *build.Builder
	Intake   submission.Limits
	event.Shape
	Seed         uint64
	Concurrency  int
	MaxAttempts  int
	ArenaVersion string
	Signer       ed25519.PrivateKey
	Progress     runner.Progress
	// Workers, when set, play the games instead of this machine.
	Workers *Workers
	// Watch, when set, follows each game this machine plays (Watch).
	Watch Watch
}

// Watch follows a game this machine starts to play, for the event's live
// pages: its kind, its sides and its round of the final (0: none). It
// returns the game's observer, nil for none.
type Watch func(kind string, white, black event.Side, round, playoff int) match.Observer

// watcher is w as a tournament's Options.Watch, the sides its bots' by
// index.
func (w Watch) watcher(kind string, sides []event.Side) func(tournament.Record) match.Observer {
	if w == nil {
		return nil
	}
	return func(g tournament.Record) match.Observer {
		round, playoff := 0, 0
		if kind == event.FinalGame {
			round, playoff = g.Round, g.Playoff
		}
		return w(kind, sides[g.White], sides[g.Black], round, playoff)
	}
}

// NewFinal is the final of the event in st as cfg describes it, with its
// settings resolved: played on backend in image, the bots built by builder,
// the transcripts signed with the event's key. arena event final and arena
// serve both start from it; each then sets the run's shape and seed, and
// where the games are played and watched.
func NewFinal(st *event.Store, cfg event.Config, settings settings.Resolved, backend sandbox.Backend, image string, builder *build.Builder, arenaVersion string) (Final, error) {
	key, err := st.Signer()
	if err != nil {
		return Final{}, err
	}
	return Final{Settings: settings, Backend: backend, Image: image, Builder: builder, Intake: cfg.Intake(),
		ArenaVersion: arenaVersion, Signer: key}, nil
}
