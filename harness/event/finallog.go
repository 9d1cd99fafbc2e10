package event

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

// The final's log (eventlog) commits to the final as it is played: first
// its configuration and its players (the pinned submissions, in their
// seed order), then each game's pairing as the final schedules it, then
// each game as it is recorded. A checkpoint is signed each time entries
// are appended. Anyone holding the published log and the games checks the
// whole final with arena verify (docs/verify.md).

// LogKeyFile is the log's signing key in the event directory (a hex
// ed25519 seed, made on first use, readable by its owner only).
const LogKeyFile = "log.key"

// The kinds of the log's entries: the final's, then a ladder game
// (Log.Ladder), whose ID is the event's. A scrimmage's game is never
// logged (LogGame); LogScrimmage names the entries of the scrimmages' games
// that an earlier arena logged.
const (
	LogFinal     = "final"
	LogPlayer    = "player"
	LogPairing   = "pairing"
	LogGame      = "game"
	LogEnd       = "end"
	LogLadder    = LadderGame
	LogScrimmage = ScrimmageGame
)

// LogEntry is one entry of the final's log, as JSON. Kind says which of
// its fields are set.
type LogEntry struct {
	Kind string `json:"kind"`
	// final: the tournament's configuration without its bots (a player
	// entry each follows, with no path of the server's).
	Config *tournament.Config `json:"config,omitempty"`
	Bots   int                `json:"bots,omitempty"`
	// LeftOut are the event's teams the final does not play, each with
	// why, by name: a team dropped in silence would be missed by no one.
	LeftOut []LeftOut `json:"leftOut,omitempty"`
	// player: the bot at Seed (its index in the configuration's bots, from
	// 0) and its team.
	Player *tournament.BotEntry `json:"player,omitempty"`
	Seed   *int                 `json:"seed,omitempty"`
	// Upload is the player's submission's SHA-256 as its team uploaded it
	// and its pages show it (the Player's own SHA256 is the program's, as
	// played: a script's line endings made Unix, a source built).
	Upload string `json:"upload,omitempty"`
	// pairing: a game as the final scheduled it.
	Pairing *tournament.Game `json:"pairing,omitempty"`
	// game: a game's outcome and its transcript's fingerprints.
	Game *LoggedGame `json:"game,omitempty"`
	// end: the final played every game it scheduled, the last entry of
	// its own.
	End *LoggedEnd `json:"end,omitempty"`
}

// LeftOut is a team the final does not play, and why.
type LeftOut struct {
	Team string `json:"team"`
	Why  string `json:"why"`
}

// Why a team is left out of the final, as its log says.
const (
	LeftOutDisabled     = "disabled by the organizer"
	LeftOutNoSubmission = "no submission that plays at the close"
	LeftOutNotTop       = "not among the ladder's top teams the final plays"
)

// leftOut are the teams of the event the final's players (by team name)
// do not include, with why.
func (s *Store) leftOut(ctx context.Context, players []tournament.BotEntry) ([]LeftOut, error) {
	o, err := s.FinalOutlook(ctx)
	if err != nil {
		return nil, err
	}
	plays := map[string]bool{}
	for _, b := range players {
		plays[b.Team] = true
	}
	var out []LeftOut
	for _, e := range o.Playing {
		if !plays[e.Name] {
			out = append(out, LeftOut{e.Name, LeftOutNotTop})
		}
	}
	for _, t := range append(o.Missing, o.Waiting...) {
		out = append(out, LeftOut{t.Name, LeftOutNoSubmission})
	}
	for _, t := range o.Disabled {
		out = append(out, LeftOut{t.Name, LeftOutDisabled})
	}
	slices.SortFunc(out, func(a, b LeftOut) int { return strings.Compare(a.Team, b.Team) })
	return out, nil
}

// LoggedEnd is the end of the final as its log records it, once every
// game it scheduled was played and logged: how many games it played and
// the SHA-256 of its standings.json as published, so that a bundle cut
// back to an older checkpoint lacks it, and the standings are signed.
type LoggedEnd struct {
	Games     int    `json:"games"`
	Standings string `json:"standings"`
}

// LoggedGame is a game of the final as its log entry records it.
type LoggedGame struct {
	ID     int    `json:"id"` // the pairing's
	White  string `json:"white"`
	Black  string `json:"black"` // the submissions' SHA-256
	Seed   uint64 `json:"seed"`
	Winner string `json:"winner"`
	Reason string `json:"reason"`
	Plies  int    `json:"plies"`
	// Transcript is the SHA-256 of the transcript as recorded; Public of
	// its copy with both sides' private fields left out (transcript.Redact:
	// what is published); Head the hash of its last line, which its chain
	// ties every line to; Key the key that signed it (hex).
	Transcript string `json:"transcript"`
	Public     string `json:"public"`
	Head       string `json:"head"`
	Key        string `json:"key,omitempty"`
	// Dir is the game's directory in a published bundle.
	Dir string `json:"dir"`
}

// logKey is the key of an entry: one entry per key.
func (e LogEntry) logKey() string {
	switch {
	case e.Seed != nil:
		return LogPlayer + ":" + strconv.Itoa(*e.Seed)
	case e.Pairing != nil:
		return LogPairing + ":" + strconv.Itoa(e.Pairing.ID)
	case e.Game != nil && e.Kind != LogGame:
		return e.Kind + ":" + strconv.Itoa(e.Game.ID)
	case e.Game != nil:
		return LogGame + ":" + strconv.Itoa(e.Game.ID)
	}
	return e.Kind
}

var originChars = regexp.MustCompile(`[^A-Za-z0-9._/-]+`)

// LogOriginFile holds the name of the event's log (its origin: its
// checkpoints' first line and its key's name) in the event directory, fixed
// once when the event is made: the log keeps its name, and its published
// key keeps verifying, wherever the event is served from (a backup restored
// elsewhere, a directory moved or renamed). A backup copies it.
const LogOriginFile = "log.origin"

// LogOrigin names the event's log: its checkpoints' first line and its
// key's name (LogOriginFile).
func (s *Store) LogOrigin() string { return s.logOrigin }

// FixLogOrigin is the origin of the log of the event in dir, fixed on
// first call: "arena/" and the name dir has then (its characters outside
// A-Z, a-z, 0-9 and ._/- each run made one -), written to
// DIR/LogOriginFile, which every later call reads. An event made before
// the origin was kept gets the name its log had all along, the
// directory's, the first time it is opened.
func FixLogOrigin(dir string) (origin string, err error) {
	path := filepath.Join(dir, LogOriginFile)
	origin, err = readLogOrigin(path)
	if !errors.Is(err, os.ErrNotExist) {
		return origin, err
	}
	origin = "arena/" + originChars.ReplaceAllString(filepath.Base(dir), "-")
	// Written whole under a temporary name, then linked in place: a
	// reader never sees half an origin, and of two processes fixing it at
	// once the first one's stands.
	f, err := os.CreateTemp(dir, LogOriginFile+".*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	defer func() { // linked in place or not, the temporary name goes
		if rerr := os.Remove(tmp); rerr != nil {
			origin, err = "", errors.Join(err, rerr)
		}
	}()
	_, err = f.WriteString(origin + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Link(tmp, path); errors.Is(err, os.ErrExist) {
		return readLogOrigin(path)
	} else if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return "", err
	}
	return origin, nil
}

// readLogOrigin reads the log's origin kept at path.
func readLogOrigin(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	origin := strings.TrimSuffix(string(data), "\n")
	if origin == "" || originChars.MatchString(origin) {
		return "", fmt.Errorf("%s holds %q: not a log's origin (one line of A-Z, a-z, 0-9 and ._/-)", path, data)
	}
	return origin, nil
}

// LogKeys are the final log's signer and its public (verifier) key, made
// on first use: published on the home page before the final.
func (s *Store) LogKeys() (eventlog.Signer, string, error) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.logSigner != nil {
		return s.logSigner, s.logVerifier, nil
	}
	key, err := transcript.LoadOrCreateKey(filepath.Join(s.Dir, LogKeyFile))
	if err != nil {
		return nil, "", fmt.Errorf("the final log's key: %w", err)
	}
	signer, vkey, err := eventlog.Keys(s.LogOrigin(), key)
	if err != nil {
		return nil, "", err
	}
	s.logSigner, s.logVerifier = signer, vkey
	return signer, vkey, nil
}

// SyncFinalLog appends to the final's log what it lacks (its
// configuration and players once the final is scheduled, every pairing
// scheduled, every game recorded), in order, in one transaction, and
// signs a checkpoint of it. It is run as the final plays and after; a run
// cut short catches up at the next.
func (s *Store) SyncFinalLog(ctx context.Context) error {
	run, ok, err := s.FinalRun(ctx)
	if err != nil || !ok {
		return err
	}
	dir := filepath.Join(s.Dir, FinalDir)
	if _, err := os.Stat(filepath.Join(dir, tournament.DBFile)); errors.Is(err, os.ErrNotExist) {
		return nil // not scheduled yet
	}
	signer, _, err := s.LogKeys()
	if err != nil {
		return err
	}
	st, err := tournament.OpenStore(dir, true)
	if err != nil {
		return err
	}
	defer st.Close() // read-only
	cfg, err := st.Config(ctx)
	if err != nil {
		return err
	}
	recs, err := st.Games(ctx)
	if err != nil {
		return err
	}
	recorded, err := s.finalFinished(ctx)
	if err != nil {
		return err
	}
	// What the log may lack, in its order; entries already there are not
	// appended again (one per key).
	public := *cfg
	public.Bots = nil
	left, err := s.leftOut(ctx, cfg.Bots)
	if err != nil {
		return err
	}
	entries := []LogEntry{{Kind: LogFinal, Config: &public, Bots: len(cfg.Bots), LeftOut: left}}
	seeds, err := s.FinalSeeds(ctx) // the bots' order, with the submissions' hashes
	if err != nil {
		return err
	}
	for i, b := range cfg.Bots {
		b.Source = "" // the server's path
		e := LogEntry{Kind: LogPlayer, Player: &b, Seed: &i}
		if len(seeds) == len(cfg.Bots) {
			e.Upload = seeds[i].SHA256
		}
		entries = append(entries, e)
	}
	for _, r := range recs {
		entries = append(entries, LogEntry{Kind: LogPairing, Pairing: &r.Game})
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	// What is logged already is read once: a final of thousands of games
	// syncs after each.
	logged, err := eventlog.Logged(ctx, s.w)
	if err != nil {
		return err
	}
	entries = slices.DeleteFunc(entries, func(e LogEntry) bool { return logged[e.logKey()] })
	for _, r := range recs {
		if r.Status != tournament.Done || r.Dir == "" {
			continue
		}
		if _, ok := recorded[filepath.Join(FinalDir, r.Dir)]; !ok {
			continue // logged once the event has it
		}
		if logged[LogGame+":"+strconv.Itoa(r.ID)] {
			continue
		}
		g, err := logGame(filepath.Join(dir, r.Dir), r, cfg)
		if err != nil {
			return fmt.Errorf("log game %d of the final: %w", r.ID, err)
		}
		g.Dir = filepath.ToSlash(filepath.Join(FinalDir, r.Dir))
		entries = append(entries, LogEntry{Kind: LogGame, Game: g})
	}
	if !logged[LogEnd] && finalEnded(run, recs, recorded) {
		end, err := endOf(ctx, dir, len(recs))
		if err != nil {
			return err
		}
		entries = append(entries, LogEntry{Kind: LogEnd, End: end})
	}
	return s.appendLogLocked(ctx, signer, entries)
}

// finalEnded says whether the final played every game it scheduled: its
// run ended without an error, and each of its games was played and
// recorded (a game left unplayed is not an end; played again later, it
// is).
func finalEnded(run FinalRun, recs []tournament.Record, recorded map[string]time.Time) bool {
	if run.Finished.IsZero() || run.Error != "" || len(recs) == 0 {
		return false
	}
	for _, r := range recs {
		if _, ok := recorded[filepath.Join(FinalDir, r.Dir)]; r.Status != tournament.Done || r.Dir == "" || !ok {
			return false
		}
	}
	return true
}

// endOf is the end entry of the final in dir, of its games played: its
// standings.json as PublishFinal writes it, by its hash.
func endOf(ctx context.Context, dir string, games int) (*LoggedEnd, error) {
	state, err := tournament.Load(ctx, dir)
	if err != nil {
		return nil, err
	}
	standings, err := state.StandingsJSON()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(standings)
	return &LoggedEnd{Games: games, Standings: hex.EncodeToString(sum[:])}, nil
}

// appendLog appends entries (each once, by key) and signs a checkpoint if
// any was new.
func (s *Store) appendLog(ctx context.Context, signer eventlog.Signer, entries []LogEntry) error {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.appendLogLocked(ctx, signer, entries)
}

// appendLogLocked is appendLog with logMu held.
func (s *Store) appendLogLocked(ctx context.Context, signer eventlog.Signer, entries []LogEntry) error {
	if len(entries) == 0 {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The write lock first, before anything is read: another process
	// (arena event publish beside the server) may log the same entries;
	// each is appended once, by key, at the size the lock holder reads.
	if _, err := tx.ExecContext(ctx, `UPDATE log_checkpoints SET at = at WHERE 0`); err != nil {
		return err
	}
	added := false
	for _, e := range entries {
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, a, err := eventlog.Append(ctx, tx, e.logKey(), data)
		if err != nil {
			return fmt.Errorf("the event's log: %w", err)
		}
		added = added || a
	}
	if added {
		if _, err := eventlog.Sign(ctx, tx, signer, now()); err != nil {
			return fmt.Errorf("the event's log: %w", err)
		}
	}
	return tx.Commit()
}

// logGame is a played game's entry: its outcome, and its transcript's
// fingerprints.
func logGame(dir string, r tournament.Record, cfg *tournament.Config) (*LoggedGame, error) {
	g, _, err := fingerprint(dir)
	if err != nil {
		return nil, err
	}
	g.ID, g.White, g.Black, g.Seed = r.ID, cfg.Bots[r.White].SHA256, cfg.Bots[r.Black].SHA256, r.Seed
	g.Winner, g.Reason, g.Plies = r.Winner, r.Reason, r.Plies
	return g, nil
}

// fingerprint is what a game's entry says of its transcript in dir (its
// hashes, its chain's head, its signer) and the transcript's header.
func fingerprint(dir string) (*LoggedGame, transcript.Header, error) {
	var h transcript.Header
	raw, err := os.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return nil, h, err
	}
	lines, err := transcript.Read(bytes.NewReader(raw))
	if err != nil {
		return nil, h, err
	}
	if err := transcript.VerifyChain(lines); err != nil {
		return nil, h, err
	}
	key, err := transcript.VerifySignature(lines)
	if err != nil {
		return nil, h, err
	}
	if err := lines[0].Decode(&h); err != nil {
		return nil, h, err
	}
	pub, err := transcript.Redact(lines, "")
	if err != nil {
		return nil, h, err
	}
	sum, psum := sha256.Sum256(raw), sha256.Sum256(pub)
	return &LoggedGame{Transcript: hex.EncodeToString(sum[:]), Public: hex.EncodeToString(psum[:]), Head: lines[len(lines)-1].Hash, Key: key}, h, nil
}

// LogGame appends a ladder game, as it is recorded, to the event's log,
// and signs a checkpoint of it (Log.Ladder). Any other game is refused: the
// final's are logged by SyncFinalLog, and a scrimmage's never, for only its
// two teams and the organizer see it.
func (s *Store) LogGame(ctx context.Context, g Game) error {
	if g.Kind != LadderGame {
		return fmt.Errorf("log game %d: a %s game is not logged", g.ID, g.Kind)
	}
	signer, _, err := s.LogKeys()
	if err != nil {
		return err
	}
	lg, h, err := fingerprint(s.MatchDir(g))
	if err != nil {
		return fmt.Errorf("log game %d: %w", g.ID, err)
	}
	lg.ID, lg.White, lg.Black, lg.Seed = int(g.ID), g.White.SHA256, g.Black.SHA256, h.Seed
	lg.Winner, lg.Reason, lg.Plies, lg.Dir = g.Winner, g.Reason, g.Plies, filepath.ToSlash(g.Dir)
	return s.appendLog(ctx, signer, []LogEntry{{Kind: g.Kind, Game: lg}})
}

// FinalLogCheckpoint is the final log's latest checkpoint and its size,
// during a freeze too: a checkpoint commits to the entries logged since the
// freeze (their number, not what they say), so a team that keeps one then
// holds the organizer to them after the reveal (arena verify --since).
// Their tiles and proofs wait for the reveal (FinalLogTile, LogProofOf).
func (s *Store) FinalLogCheckpoint(ctx context.Context) (signed []byte, size int64, err error) {
	return eventlog.Latest(ctx, s.r, "")
}

// shownLog is the checkpoint of the final log's tree whose entries may be
// read now, and its size: while the scoreboard is frozen, the last one
// signed before the freeze (the entries after it would tell results; even
// their hashes, of pairings a team could guess, would); else the latest.
func (s *Store) shownLog(ctx context.Context) (signed []byte, size int64, err error) {
	at, frozen, err := s.Frozen(ctx)
	if err != nil {
		return nil, 0, err
	}
	before := ""
	if frozen {
		before = at.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
	}
	return eventlog.Latest(ctx, s.r, before)
}

// WitnessRequest is what the final's log asks the witness at url to cosign
// now: the checkpoint of the tree whose entries may be read (shownLog:
// during a freeze, the last one signed before it, for a consistency proof
// holds hashes of the entries after the one it proves from), its size,
// the size the witness last cosigned (0: none) and the proof from it. A
// size no larger than old is nothing to ask: a witness up to date, or one
// that cosigned more than may be shown now (a freeze set from a time
// already past).
func (s *Store) WitnessRequest(ctx context.Context, url string) (signed []byte, size, old int64, proof tlog.TreeProof, err error) {
	signed, size, err = s.shownLog(ctx)
	if err != nil || signed == nil {
		return nil, 0, 0, nil, err
	}
	err = s.readRow(ctx, `SELECT size FROM log_witnesses WHERE url = ?`, url).Scan(&old)
	if errors.Is(err, sql.ErrNoRows) {
		old, err = 0, nil
	}
	if err != nil || old >= size {
		return signed, size, old, nil, err
	}
	proof, err = eventlog.Consistency(ctx, s.r, old, size)
	return signed, size, old, proof, err
}

// Witnessed records that the witness at url last cosigned a checkpoint of
// size entries (what it answered when asked from another size), and keeps
// its cosignature lines, when given, with the checkpoint of that size: the
// checkpoint is served and published with them.
func (s *Store) Witnessed(ctx context.Context, url string, size int64, cosignature []byte) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit, a no-op
	if _, err := tx.ExecContext(ctx, `INSERT INTO log_witnesses (url, size) VALUES (?, ?)
		ON CONFLICT (url) DO UPDATE SET size = excluded.size`, url, size); err != nil {
		return err
	}
	if len(cosignature) > 0 {
		var note []byte
		if err := tx.QueryRowContext(ctx, `SELECT note FROM log_checkpoints WHERE size = ?`, size).Scan(&note); err != nil {
			return fmt.Errorf("the checkpoint of %d entries the witness cosigned: %w", size, err)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(string(cosignature), "— "), " ")
		if !bytes.Contains(note, []byte("\n— "+name+" ")) { // not cosigned by it already
			if _, err := tx.ExecContext(ctx, `UPDATE log_checkpoints SET note = ? WHERE size = ?`, append(note, cosignature...), size); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// ErrWithheld is a tile of the final's log that its latest checkpoint
// holds but that is not served before the scoreboard is revealed.
var ErrWithheld = errors.New("withheld until the scoreboard is revealed")

// FinalLogTile is a tile of the final's log within the tree whose entries
// may be read now (shownLog); a tile of the latest tree past it is
// ErrWithheld until the reveal.
func (s *Store) FinalLogTile(ctx context.Context, path string) ([]byte, error) {
	_, shown, err := s.shownLog(ctx)
	if err != nil {
		return nil, err
	}
	data, err := eventlog.Tile(ctx, s.r, shown, path)
	if !errors.Is(err, eventlog.ErrNoTile) {
		return data, err
	}
	_, latest, lerr := s.FinalLogCheckpoint(ctx)
	if lerr != nil {
		return nil, lerr
	}
	if latest > shown {
		if _, lerr := eventlog.Tile(ctx, s.r, latest, path); lerr == nil {
			return nil, ErrWithheld
		}
	}
	return nil, err
}

// LogProofOf is the inclusion proof (C2SP tlog-proof, the entry in its
// extra line) of the entry of the game in dir (relative to the event
// directory, as games record it: a final's game, or a ladder game the
// event logs), against the checkpoint of the tree whose entries may be
// read now (shownLog: a proof holds hashes of entries beside its own);
// ok is false while the game is not in that tree (not logged, not yet, or
// logged after a freeze).
func (s *Store) LogProofOf(ctx context.Context, dir string) (proof []byte, ok bool, err error) {
	signed, size, err := s.shownLog(ctx)
	if err != nil || signed == nil {
		return nil, false, err
	}
	var n int64
	var data []byte
	err = s.r.QueryRowContext(ctx, `SELECT n, data FROM log_entries WHERE (key LIKE 'game:%' OR key LIKE 'ladder:%') AND json_extract(data, '$.game.dir') = ?`, filepath.ToSlash(dir)).Scan(&n, &data)
	if errors.Is(err, sql.ErrNoRows) || err == nil && n >= size {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	proof, err = eventlog.Proof(ctx, s.r, n, signed, data)
	return proof, err == nil, err
}

// FinalLogCheckpoints are every checkpoint the final's log signed, oldest
// first: each one extends the one before.
func (s *Store) FinalLogCheckpoints(ctx context.Context) ([][]byte, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT note FROM log_checkpoints ORDER BY size`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var note []byte
		if err := rows.Scan(&note); err != nil {
			return nil, err
		}
		out = append(out, note)
	}
	return out, rows.Err()
}
