package event

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

// A published bundle of the final: its log, its games' public transcripts,
// its standings, the log's key, a README; and, when the organizer
// publishes them, the finalists' submissions.

// PublishFinal writes the final's bundle to out, a directory that must
// not exist yet: the log as static tiles (log/checkpoint, log/tile/...),
// the latest checkpoint's, every logged game's published transcript (both
// sides' private fields left out, transcript.Redact) where its entry says,
// the final's standings.json, the log's public key and a README saying
// how to check it. It is what arena verify checks.
func (s *Store) PublishFinal(ctx context.Context, out string) (size int64, err error) {
	if err := s.SyncFinalLog(ctx); err != nil {
		return 0, err
	}
	signed, size, err := eventlog.Latest(ctx, s.r, "")
	if err != nil {
		return 0, err
	}
	if signed == nil {
		return 0, errors.New("the final's log is empty: the final has not started")
	}
	_, vkey, err := s.LogKeys()
	if err != nil {
		return 0, err
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return 0, err
	}
	write := func(rel string, data []byte) error {
		path := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, data, 0o644)
	}
	if err := eventlog.WriteStatic(ctx, s.r, size, signed, filepath.Join(out, "log")); err != nil {
		return 0, err
	}
	for n := range size {
		data, err := eventlog.Entry(ctx, s.r, n)
		if err != nil {
			return 0, err
		}
		var e LogEntry
		if err := json.Unmarshal(data, &e); err != nil {
			return 0, fmt.Errorf("log entry %d: %w", n, err)
		}
		if e.Game == nil {
			continue
		}
		lines, err := transcript.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(e.Game.Dir), transcript.FileName))
		if err != nil {
			return 0, err
		}
		pub, err := transcript.Redact(lines, "")
		if err != nil {
			return 0, err
		}
		if err := write(e.Game.Dir+"/"+transcript.FileName, pub); err != nil {
			return 0, err
		}
	}
	state, err := tournament.Load(ctx, filepath.Join(s.Dir, FinalDir))
	if err != nil {
		return 0, err
	}
	standings, err := state.StandingsJSON()
	if err != nil {
		return 0, err
	}
	if err := write(BundleStandings, standings); err != nil {
		return 0, err
	}
	if err := write(BundleKey, []byte(vkey+"\n")); err != nil {
		return 0, err
	}
	return size, write("README.md", []byte(fmt.Sprintf(bundleReadme, s.LogOrigin(), size)))
}

// The files of a published bundle besides the log and the games.
const (
	BundleStandings = "standings.json"
	BundleKey       = "key.txt"
	// BundleSubmissions holds the finalists' uploads, when the organizer
	// publishes them (PublishSubmissions): arena verify --replay plays
	// the final again from them.
	BundleSubmissions = "submissions"
)

// PublishSubmissions writes each finalist's upload, as its team uploaded
// it, into out's submissions directory (which must not exist yet), named
// by the bot name its team plays under and the upload's own extension
// ("Ant-Co.zip", "Cat-3.py"), its mode kept. It returns how many it wrote.
// Publishing them is the organizer's choice: anyone can then play the
// final again (arena verify --replay).
func (s *Store) PublishSubmissions(ctx context.Context, out string) (int, error) {
	entries, err := s.FinalEntries(ctx)
	if err != nil {
		return 0, err
	}
	if len(entries) == 0 {
		return 0, errors.New("no submission is pinned for the final: close the event first")
	}
	dir := filepath.Join(out, BundleSubmissions)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return 0, err
	}
	for _, e := range entries {
		sub, err := s.Submission(ctx, e.Submission)
		if err != nil {
			return 0, err
		}
		team, err := s.Team(ctx, e.Team)
		if err != nil {
			return 0, err
		}
		src := s.Path(sub)
		fi, err := os.Stat(src)
		if err != nil {
			return 0, err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return 0, err
		}
		name := cmp.Or(team.BotName, fmt.Sprintf("team-%d", team.ID)) // a team added before bot names were kept
		if err := os.WriteFile(filepath.Join(dir, name+filepath.Ext(sub.Filename)), data, fi.Mode().Perm()); err != nil {
			return 0, err
		}
	}
	return len(entries), nil
}

const bundleReadme = `# The final's published log: %s

This directory is the final as it was played: a signed, append-only log of
%d entries (log/checkpoint, log/tile/), every game's transcript as it is
shown to anyone (each team's own output and file names left out, their
hashes kept), and the standings (standings.json).

Check it with the key you kept from the event's home page (key.txt holds the
log's own copy of it; trust the one you kept):

    arena verify --key 'KEY' DIR

arena verify checks the checkpoint's signature, rebuilds the log's tree from
its entries, checks that every scheduled pairing has exactly its game and no
other and that the log says the final ended (its last entry signs
standings.json by its hash), replays and re-judges every transcript against
the log's entry of its game, and recomputes the standings from the games.
With --since OLD it also
checks that this log extends an older checkpoint you kept (none of its
entries was changed or dropped); with --partial it checks a final still in
progress, whose pairings may lack their games yet. A team's inclusion proof of one of its games
is checked with arena verify --key 'KEY' --proof FILE. When the organizer
published the finalists' uploads too (submissions/), arena verify --key 'KEY'
--replay DIR/submissions DIR plays every game again from them in the
sandbox and compares each with its transcript, turn by turn. See
docs/verify.md for what this proves and what it does not.

The same paths can be served by any static web server: arena verify takes
the site's URL as well as a directory.
`
