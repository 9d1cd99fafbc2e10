package match

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
)

// settle fills in a configuration's defaults, checks it and returns the
// referee it is played by: the one reading of a Config, for Run and Bound.
func (cfg *Config) settle() (*referee.Referee, error) {
	if cfg.White == nil || cfg.Black == nil || cfg.Backend == nil || cfg.Game == nil {
		return nil, errors.New("match: game, both bots and a backend are required")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	if cfg.Evidence.Keep == "" {
		cfg.Evidence.Keep = transcript.KeepChanged
	}
	if err := transcript.ParseKeep(cfg.Evidence.Keep); err != nil {
		return nil, err
	}
	if cfg.Evidence.Budget < 0 {
		return nil, fmt.Errorf("evidence budget: want 0 (none) or more bytes, got %d", cfg.Evidence.Budget)
	}
	if cfg.OnFault == "" {
		cfg.OnFault = Forfeit
	}
	return referee.New(referee.Config{Game: cfg.Game, Rules: cfg.Rules, Seed: cfg.Seed, OnFault: cfg.OnFault,
		White: transcript.BotRef{Name: cfg.White.Name, SHA256: cfg.White.SHA256},
		Black: transcript.BotRef{Name: cfg.Black.Name, SHA256: cfg.Black.SHA256}})
}

// terms is the part of a header that says which game was asked for: the
// identity, the bots in their places, the rules with their defaults, the
// limits, the clock and the evidence policy. The runner writes it, and Bound
// compares a transcript with it, so the two cannot disagree.
func terms(cfg Config, ref *referee.Referee) transcript.Header {
	protocol := "files"
	if ref.Lines() != nil {
		protocol = "lines"
	}
	opts := map[string]string{}
	for _, o := range cfg.Game.Options() {
		opts[o.Name] = o.Default
	}
	maps.Copy(opts, cfg.Rules)
	var evidence *transcript.Evidence
	if f := ref.Files(); f != nil && f.DataFiles > 0 {
		e := cfg.Evidence
		evidence = &e
	}
	return transcript.Header{
		Format:       transcript.Format,
		ArenaVersion: cfg.ArenaVersion,
		Game:         cfg.Game.Name(),
		Rules:        opts,
		Seed:         cfg.Seed,
		White:        botInfo(cfg.White),
		Black:        botInfo(cfg.Black),
		OnFault:      string(cfg.OnFault),
		Protocol:     protocol,
		Limits:       cfg.Limits,
		TimeControl:  ref.TimeControl(),
		Opening:      transcript.LinesOf(ref.Opening()),
		Evidence:     evidence,
		Job:          cfg.Job,
	}
}

func botInfo(b *submission.Bot) transcript.Bot {
	return transcript.Bot{Name: b.Name, SHA256: b.SHA256, SubmissionSHA256: b.SubmissionSHA256, Source: b.Source, Entry: b.Program.Entry,
		Language: b.Language, Toolchain: b.Toolchain}
}

// SandboxFacts are the keys of a header's sandbox description that a game's
// terms include: the backend and, for a container backend, the runtime
// image's id and the engine's runtime the bots ran under (runc, runsc).
var SandboxFacts = []string{"backend", "imageId", "runtime"}

// Bound checks that a transcript's header is the game cfg asks for, played on
// a sandbox with these facts (see SandboxFacts; cfg.Backend is not asked). It
// names the first field that differs: a result is counted only for the game
// it was played for.
func Bound(h transcript.Header, cfg Config, sandbox map[string]string) error {
	ref, err := cfg.settle()
	if err != nil {
		return err
	}
	want := terms(cfg, ref)
	fields := []struct {
		name      string
		got, want any
	}{
		{"job", h.Job, want.Job},
		{"format", h.Format, want.Format},
		{"arenaVersion", h.ArenaVersion, want.ArenaVersion},
		{"game", h.Game, want.Game},
		{"seed", h.Seed, want.Seed},
		{"white", h.White, want.White},
		{"black", h.Black, want.Black},
		{"rules", h.Rules, want.Rules},
		{"onFault", h.OnFault, want.OnFault},
		{"protocol", h.Protocol, want.Protocol},
		{"limits", h.Limits, want.Limits},
		{"timeControl", h.TimeControl, want.TimeControl},
		{"opening", h.Opening, want.Opening},
		{"evidence", h.Evidence, want.Evidence},
	}
	for _, k := range SandboxFacts {
		fields = append(fields, struct {
			name      string
			got, want any
		}{"sandbox." + k, h.Sandbox[k], sandbox[k]})
	}
	// Compared as the transcript writes them: an empty list and none are
	// the same record.
	for _, f := range fields {
		got, err := json.Marshal(f.got)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		want, err := json.Marshal(f.want)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if string(got) != string(want) {
			return fmt.Errorf("%s differs: the transcript has %s, the job %s", f.name, got, want)
		}
	}
	return nil
}
