// Package verify checks a final's published bundle (event.PublishFinal),
// from a directory or a copy served over HTTP, with nothing but the log's
// public key: the checkpoint's signature, the log's tree rebuilt from its
// entries, every scheduled pairing with exactly its game, every transcript
// replayed and re-judged against its game's entry, and the standings
// recomputed from the games.
//
// It must never take anything in a bundle on trust that the key's
// signature does not cover, and every failure it reports names the entry
// (or the file) and the field. A bundle is hostile input: only regular
// files inside its directory are read (no link out of it, no named pipe
// or device), every file is bounded by the most its kind may weigh before
// it is read, a checkpoint's claimed size allocates nothing until its
// entries are there, a served copy redirects only within its own origin,
// and the whole check has a time limit.
package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/witness"
)

// Options say what to check a bundle against.
type Options struct {
	// Key is the log's public key (a note verifier key, from the event's
	// home page before the final).
	Key string
	// Since are older signed checkpoints of the same log, each a
	// checkpoint's file or a proof that carries one (a game's
	// .tlog-proof): the bundle's log must extend every one.
	Since [][]byte
	// Partial checks a final in progress: its scheduled pairings may lack
	// their games (Result says how many have them). Without it every
	// pairing must have its game.
	Partial bool
	// Timeout is the most the whole check may take (0: DefaultTimeout);
	// past it the check stops with a *TimeoutError.
	Timeout time.Duration
	// Witnesses are the keys of witnesses (arena witness) the bundle's
	// checkpoint must be cosigned by, Quorum of them at least (0: all).
	Witnesses []string
	Quorum    int
}

// TimeoutError is a check that did not finish within its time limit.
type TimeoutError struct{ Limit time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the check did not finish within %v (a server too slow, or a bundle too big)", e.Limit)
}

// Result is what a bundle that holds says.
type Result struct {
	Checkpoint eventlog.Checkpoint
	// Cosigned are the witnesses asked for (Options.Witnesses) that
	// cosigned the checkpoint, by name.
	Cosigned []string
	Players  int
	Pairings int
	// Games are the final's games: with Options.Partial, fewer than its
	// pairings while it is in progress.
	Games int
	// Others are the ladder and scrimmage games the log holds.
	Others    int
	Standings []tournament.Row
	// End is the log's end of the final (nil: the log does not say it
	// ended, which only Options.Partial accepts).
	End *event.LoggedEnd
	// Config is the final's configuration as the log holds it, its Bots
	// the players in seed order (each one's program as played), Uploads
	// their submissions' SHA-256 as their teams uploaded them, and Records
	// every pairing, with its game's outcome and transcript's directory
	// where the log holds it (harness/reproduce plays them again).
	Config  *tournament.Config
	Uploads []string
	// LeftOut are the event's teams the final's entry says it does not
	// play, and why.
	LeftOut []event.LeftOut
	// Unread are the files of a bundle in a directory that the log does
	// not name and a bundle does not hold (an unlogged transcript, say):
	// not checked, and evidence of nothing.
	Unread  []string
	Records []tournament.Record
}

// Problems are every failure a check found, each naming its entry or file
// and field.
type Problems []string

func (p Problems) Error() string {
	if len(p) == 1 {
		return p[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(p), strings.Join(p, "\n  "))
}

// Bundle checks the bundle src holds (see the package's doc). A bundle
// that does not hold is a Problems error; any other error is a bundle that
// could not be read at all (a *TimeoutError past Options.Timeout).
func Bundle(ctx context.Context, src Source, o Options) (*Result, error) {
	if _, err := note.NewVerifier(o.Key); err != nil {
		return nil, fmt.Errorf("the key %q is not a log's public key (NAME+HASH+KEY, as the event's home page shows it): %w", o.Key, err)
	}
	limit := o.Timeout
	if limit <= 0 {
		limit = DefaultTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, limit, &TimeoutError{limit})
	defer cancel()
	opened := &recorder{Source: src, opened: map[string]bool{}}
	r, err := bundle(ctx, opened, o)
	if err != nil && ctx.Err() != nil {
		// What failed once the time was up failed for it.
		return nil, context.Cause(ctx)
	}
	if l, ok := src.(Lister); ok && r != nil {
		files, lerr := l.Files()
		if lerr != nil {
			return r, errors.Join(err, lerr)
		}
		r.Unread = unread(files, opened.opened)
	}
	return r, err
}

// recorder is a Source that keeps the names of the files opened.
type recorder struct {
	Source
	opened map[string]bool
}

func (r *recorder) Open(ctx context.Context, name string, limit int64) (io.ReadCloser, error) {
	r.opened[name] = true
	return r.Source.Open(ctx, name, limit)
}

// unread are the files of a bundle the check did not read and that are
// none of a bundle's own (the log's, the key, the README, the standings,
// the submissions): a transcript the log does not name, say.
func unread(files []string, opened map[string]bool) []string {
	var out []string
	for _, f := range files {
		switch {
		case opened[f], f == event.BundleKey, f == "README.md", f == event.BundleStandings,
			strings.HasPrefix(f, "log/"), strings.HasPrefix(f, event.BundleSubmissions+"/"):
		default:
			out = append(out, f)
		}
	}
	return out
}

func bundle(ctx context.Context, src Source, o Options) (*Result, error) {
	signed, err := Read(ctx, src, "log/checkpoint", maxCheckpoint)
	if err != nil {
		return nil, err
	}
	c, err := eventlog.Verify(signed, o.Key)
	if err != nil {
		return nil, Problems{"log/checkpoint: " + err.Error()}
	}
	var cosigned []string
	if len(o.Witnesses) > 0 {
		quorum := o.Quorum
		if quorum <= 0 {
			quorum = len(o.Witnesses)
		}
		names, err := witness.Cosigned(signed, o.Witnesses)
		if err != nil {
			return nil, Problems{"log/checkpoint: " + err.Error()}
		}
		cosigned = names
		if len(names) < quorum {
			by := "none of them"
			if len(names) > 0 {
				by = strings.Join(names, ", ")
			}
			return nil, Problems{fmt.Sprintf("log/checkpoint: cosigned by %d of the %d witnesses asked for (%s), fewer than the %d wanted: no quorum saw this log", len(names), len(o.Witnesses), by, quorum)}
		}
	}
	if c.Size > MaxEntries {
		return nil, Problems{fmt.Sprintf("log/checkpoint: it signs a log of %d entries, more than the %d a bundle may hold", c.Size, int64(MaxEntries))}
	}
	entries, err := readEntries(ctx, src, c.Size)
	if err != nil {
		return nil, err
	}
	tree, err := eventlog.TreeOf(entries)
	if err != nil {
		return nil, err
	}
	root, err := tree.Root()
	if err != nil {
		return nil, err
	}
	if root != c.Hash {
		return nil, Problems{fmt.Sprintf("log/tile/entries: the log's %d entries make the root %s, its checkpoint signs %s: an entry was changed, dropped or added", c.Size, root, c.Hash)}
	}
	var p Problems
	for i, since := range o.Since {
		what := "the older checkpoint"
		if len(o.Since) > 1 {
			what = fmt.Sprintf("older checkpoint %d of %d", i+1, len(o.Since))
		}
		if why := extends(entries, c, since, o.Key); why != "" {
			p = append(p, what+": "+why)
		}
	}
	if len(p) > 0 {
		return nil, p
	}
	if err := hashTiles(ctx, src, tree, c.Size, &p); err != nil {
		return nil, err
	}
	r := &Result{Checkpoint: c, Cosigned: cosigned}
	cfg, recs := r.entries(ctx, src, entries, o.Partial, &p)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg != nil {
		r.standings(ctx, src, cfg, recs, &p)
	}
	r.Config, r.Records = cfg, recs
	if len(p) > 0 {
		return r, p
	}
	return r, nil
}

// extends says why the log of entries, signed by c, does not extend the
// older checkpoint since (its file, or a proof that carries one), or "".
func extends(entries [][]byte, c eventlog.Checkpoint, since []byte, key string) string {
	if rest, ok := bytes.CutPrefix(since, []byte("c2sp.org/tlog-proof@v1\n")); ok {
		// A proof: its checkpoint follows its first blank line.
		_, signed, ok := bytes.Cut(rest, []byte("\n\n"))
		if !ok {
			return "a proof with no checkpoint after its blank line"
		}
		since = signed
	}
	old, err := eventlog.Verify(since, key)
	if err != nil {
		return err.Error()
	}
	if old.Size > c.Size {
		return fmt.Sprintf("it holds %d entries, this log %d: the log was cut short (a fork)", old.Size, c.Size)
	}
	if h, err := eventlog.RootOf(entries[:old.Size]); err != nil || h != old.Hash {
		return fmt.Sprintf("this log does not extend it (its first %d entries make %s, the older checkpoint signs %s): the log was forked or rewritten", old.Size, h, old.Hash)
	}
	return ""
}

// hashTiles checks that each hash tile the bundle serves is the tree's:
// a client that proves an entry from the tiles, not from every entry as
// this check does, must not be misled by them.
func hashTiles(ctx context.Context, src Source, tree *eventlog.Tree, size int64, p *Problems) error {
	for _, path := range eventlog.Tiles(size) {
		if strings.HasPrefix(path, "tile/entries/") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		want, err := tree.HashTile(path)
		if err != nil {
			return err
		}
		got, err := Read(ctx, src, "log/"+path, int64(len(want)))
		switch {
		case err != nil:
			*p = append(*p, fmt.Sprintf("log/%s cannot be read: %v", path, err))
		case !bytes.Equal(got, want):
			*p = append(*p, fmt.Sprintf("log/%s: its hashes are not the entries' tree's: a proof made from it would mislead", path))
		}
	}
	return nil
}

// readEntries reads the log's size entries from its entry bundles, one
// bundle at a time: what it holds grows with the entries the bundle has,
// never with what its checkpoint claims.
func readEntries(ctx context.Context, src Source, size int64) ([][]byte, error) {
	var out [][]byte
	full := int64(1) << eventlog.TileHeight
	for start := int64(0); start < size; start += full {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := tlog.Tile{H: eventlog.TileHeight, L: -1, N: start >> eventlog.TileHeight, W: int(min(full, size-start))}
		p := eventlog.TilePath(t, true)
		data, err := Read(ctx, src, "log/"+p, int64(t.W)*maxEntryBytes)
		if err != nil {
			return nil, fmt.Errorf("the checkpoint signs %d entries, entries %d on: %w", size, start, err)
		}
		for range t.W {
			if len(data) < 2 || len(data) < 2+int(binary.BigEndian.Uint16(data)) {
				return nil, Problems{fmt.Sprintf("log/%s: it holds fewer than the %d entries the checkpoint's tree needs", p, t.W)}
			}
			n := int(binary.BigEndian.Uint16(data))
			out = append(out, data[2:2+n])
			data = data[2+n:]
		}
		if len(data) > 0 {
			return nil, Problems{fmt.Sprintf("log/%s: %d bytes after its %d entries", p, len(data), t.W)}
		}
	}
	return out, nil
}

// entries reads the log's entries in order: the final's configuration,
// its players, then pairings and games; each game is checked against its
// pairing and its published transcript; every pairing must have its game
// unless partial. It returns the configuration and every pairing's record;
// it stops where ctx is done.
func (r *Result) entries(ctx context.Context, src Source, entries [][]byte, partial bool, p *Problems) (*tournament.Config, []tournament.Record) {
	bad := func(n int, format string, a ...any) {
		*p = append(*p, fmt.Sprintf("log entry %d: ", n)+fmt.Sprintf(format, a...))
	}
	var cfg *tournament.Config
	byID := map[int]int{} // pairing id -> index in recs
	var recs []tournament.Record
	played := map[int]int{} // pairing id -> the entry of its game
	for n, raw := range entries {
		if ctx.Err() != nil {
			return nil, nil
		}
		var e event.LogEntry
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			bad(n, "does not read: %v", err)
			continue
		}
		switch {
		case (e.Kind == event.LogLadder || e.Kind == event.LogScrimmage) && e.Game != nil:
			// A ladder or scrimmage game, logged as it was recorded: its
			// transcript is checked; it counts for no standing.
			r.Others++
			if why := checkGame(ctx, src, e.Game); why != "" {
				bad(n, "%s game %d: %s", e.Kind, e.Game.ID, why)
			}
		case cfg == nil:
			if e.Kind != event.LogFinal || e.Config == nil || e.Bots < 2 {
				bad(n, "field kind: %q, want the final's configuration first", e.Kind)
				return nil, nil
			}
			c := *e.Config
			c.Bots = make([]tournament.BotEntry, e.Bots)
			cfg = &c
			r.LeftOut = e.LeftOut
		case r.Players < len(cfg.Bots):
			if e.Kind != event.LogPlayer || e.Player == nil || e.Seed == nil || *e.Seed != r.Players {
				bad(n, "field seed: want player %d of %d, in order", r.Players, len(cfg.Bots))
				return nil, nil
			}
			cfg.Bots[r.Players] = *e.Player
			r.Uploads = append(r.Uploads, e.Upload)
			r.Players++
		case e.Kind == event.LogEnd && e.End != nil:
			if r.End != nil {
				bad(n, "field kind: the final's end was logged already")
				continue
			}
			r.End = e.End
			if e.End.Games != r.Games || r.Games != r.Pairings {
				bad(n, "field games: the end says %d games, the log holds %d of its %d pairings' before it", e.End.Games, r.Games, r.Pairings)
			}
		case r.End != nil && (e.Kind == event.LogPairing || e.Kind == event.LogGame):
			bad(n, "field kind: a %s after the final's end", e.Kind)
		case e.Kind == event.LogPairing && e.Pairing != nil:
			g := *e.Pairing
			if _, dup := byID[g.ID]; dup {
				bad(n, "field id: pairing %d was logged twice", g.ID)
				continue
			}
			if g.White < 0 || g.White >= len(cfg.Bots) || g.Black < 0 || g.Black >= len(cfg.Bots) || g.White == g.Black {
				bad(n, "pairing %d: fields white, black: %d and %d are not two of the %d players", g.ID, g.White, g.Black, len(cfg.Bots))
				continue
			}
			byID[g.ID] = len(recs)
			recs = append(recs, tournament.Record{Game: g, Status: tournament.Pending})
			r.Pairings++
		case e.Kind == event.LogGame && e.Game != nil:
			g := e.Game
			i, ok := byID[g.ID]
			if !ok {
				bad(n, "game %d: field id: no pairing of it was logged before it", g.ID)
				continue
			}
			if first, dup := played[g.ID]; dup {
				bad(n, "game %d: field id: its game was logged already, at entry %d: a pairing has one game", g.ID, first)
				continue
			}
			played[g.ID] = n
			rec := &recs[i]
			if g.White != cfg.Bots[rec.White].SHA256 || g.Black != cfg.Bots[rec.Black].SHA256 {
				bad(n, "game %d: fields white, black: %.12s and %.12s, its pairing's players are %.12s and %.12s", g.ID, g.White, g.Black, cfg.Bots[rec.White].SHA256, cfg.Bots[rec.Black].SHA256)
				continue
			}
			if g.Seed != rec.Seed {
				bad(n, "game %d: field seed: %d, its pairing's is %d", g.ID, g.Seed, rec.Seed)
				continue
			}
			// The game counts as the log says, whatever its transcript:
			// the standings are checked against the log.
			rec.Status, rec.Winner, rec.Reason, rec.Plies, rec.Dir = tournament.Done, g.Winner, g.Reason, g.Plies, g.Dir
			r.Games++
			if why := checkGame(ctx, src, g); why != "" {
				bad(n, "game %d: %s", g.ID, why)
			}
		default:
			bad(n, "field kind: %q is not an entry after the players", e.Kind)
		}
	}
	if cfg != nil && r.Players != len(cfg.Bots) {
		*p = append(*p, fmt.Sprintf("the log names %d players of the %d its configuration says", r.Players, len(cfg.Bots)))
	}
	var missing []string
	for _, rec := range recs {
		if _, ok := played[rec.ID]; !ok {
			missing = append(missing, fmt.Sprint(rec.ID))
		}
	}
	if cfg != nil && r.End == nil && !partial {
		*p = append(*p, "the log does not say the final ended (no end entry): a final in progress, or a bundle cut back to an older checkpoint (arena verify --partial checks a final in progress)")
	}
	if len(missing) > 0 && !partial {
		shown := missing
		if len(shown) > 10 {
			shown = append(shown[:10:10], "…")
		}
		*p = append(*p, fmt.Sprintf("%d of the %d scheduled pairings have no game in the log (pairing %s): the final is not whole (arena verify --partial checks a final in progress)", len(missing), len(recs), strings.Join(shown, ", ")))
	}
	return cfg, recs
}

// checkGame checks a game's published transcript against its entry: its
// bytes are the ones the entry names, its chain ends at the entry's head,
// it replays, and its header and result are the entry's. It returns why
// not, or "".
func checkGame(ctx context.Context, src Source, g *event.LoggedGame) string {
	name := g.Dir + "/" + transcript.FileName
	if !fsPath(name) {
		return fmt.Sprintf("field dir: %q is not a path inside the bundle", g.Dir)
	}
	rc, err := src.Open(ctx, name, MaxTranscript)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("its transcript %s cannot be read (a game dropped?): %v", name, err)
	}
	if err != nil {
		return fmt.Sprintf("its transcript %s cannot be read: %v", name, err)
	}
	defer rc.Close() // read only
	// Read once, a line at a time: hashed and replayed as it comes.
	sum := sha256.New()
	tee := io.TeeReader(rc, sum)
	rep, rerr := replay.Published(tee)
	// What follows where the replay stopped is hashed too: a file other
	// than the one the log names is said to be so first.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return fmt.Sprintf("its transcript %s cannot be read: %v", name, err)
	}
	if got := sum.Sum(nil); hex.EncodeToString(got) != g.Public {
		return fmt.Sprintf("field public: %s's SHA-256 is %x, the log names %.16s…: the transcript was changed", name, got[:8], g.Public)
	}
	if rerr != nil {
		return fmt.Sprintf("%s: %v", name, rerr)
	}
	if !rep.Consistent {
		return fmt.Sprintf("%s does not replay: %s", name, rep.Problem())
	}
	h := rep.Header
	switch {
	case rep.Head != g.Head:
		return fmt.Sprintf("field head: %s's chain ends at %.16s…, the log names %.16s…", name, rep.Head, g.Head)
	case g.Key != "" && h.SigningKey != g.Key:
		return fmt.Sprintf("field key: %s is signed by key %s, the log names %s", name, transcript.KeyID(h.SigningKey), transcript.KeyID(g.Key))
	case h.Seed != g.Seed:
		return fmt.Sprintf("field seed: %s's game has seed %d, the log %d", name, h.Seed, g.Seed)
	case h.White.SHA256 != g.White || h.Black.SHA256 != g.Black:
		return fmt.Sprintf("fields white, black: %s's players are %.12s and %.12s, the log's %.12s and %.12s", name, h.White.SHA256, h.Black.SHA256, g.White, g.Black)
	case rep.Result.Winner != g.Winner || rep.Result.Reason != g.Reason:
		return fmt.Sprintf("fields winner, reason: %s re-judged gives %s (%s), the log %s (%s)", name, rep.Result.Winner, rep.Result.Reason, g.Winner, g.Reason)
	}
	return ""
}

// standings recomputes the standings from the logged games, with the
// tournament's own code, and compares them with the published ones.
func (r *Result) standings(ctx context.Context, src Source, cfg *tournament.Config, recs []tournament.Record, p *Problems) {
	state := &tournament.State{Config: *cfg, Games: recs}
	rows := state.StandingsOf(func(tournament.Record) bool { return true })
	for i := range rows {
		rows[i].Team = cfg.Bots[rows[i].Bot].Team
	}
	r.Standings = rows
	data, err := Read(ctx, src, event.BundleStandings, maxStandings)
	if err != nil {
		*p = append(*p, fmt.Sprintf("%s cannot be read: %v", event.BundleStandings, err))
		return
	}
	if r.End != nil {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != r.End.Standings {
			*p = append(*p, fmt.Sprintf("%s: its SHA-256 is %x, the log's end signs %s: it is not the standings the final ended with", event.BundleStandings, sum, r.End.Standings))
		}
	}
	var published tournament.StandingsFile
	if err := json.Unmarshal(data, &published); err != nil {
		*p = append(*p, fmt.Sprintf("%s: %v", event.BundleStandings, err))
		return
	}
	if len(published.Standings) != len(rows) {
		*p = append(*p, fmt.Sprintf("%s: %d rows, the games make %d", event.BundleStandings, len(published.Standings), len(rows)))
		return
	}
	for i := range rows {
		if field, got, want := diffRow(published.Standings[i], rows[i]); field != "" {
			*p = append(*p, fmt.Sprintf("%s: row %d (%s): field %s is %s, the games make it %s", event.BundleStandings, i+1, published.Standings[i].Name, field, got, want))
		}
	}
}

// diffRow names the first field (by its JSON name) where two rows differ.
func diffRow(a, b tournament.Row) (field, got, want string) {
	var ma, mb map[string]json.RawMessage
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if err := errors.Join(errA, errB, json.Unmarshal(ja, &ma), json.Unmarshal(jb, &mb)); err != nil {
		return "row", err.Error(), ""
	}
	if reflect.DeepEqual(ma, mb) {
		return "", "", ""
	}
	// In the row's own order: its rank, name and points first.
	dec := json.NewDecoder(bytes.NewReader(jb))
	for depth := 0; ; {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			continue
		}
		k, ok := tok.(string)
		if !ok || depth != 1 {
			continue
		}
		if string(ma[k]) != string(mb[k]) {
			return k, string(ma[k]), string(mb[k])
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	for k, v := range ma {
		if _, ok := mb[k]; !ok {
			return k, string(v), "nothing"
		}
	}
	return "row", string(ja), string(jb)
}

// Proof checks a team's inclusion proof of one entry (event's
// FinalLogProof: the entry rides in the proof's extra line) with the log's
// key, offline, and returns the entry and its index.
func Proof(proof []byte, key string) (*event.LogEntry, int64, error) {
	data, err := eventlog.ProofExtra(proof)
	if err != nil {
		return nil, 0, err
	}
	n, _, err := eventlog.CheckProof(proof, data, key)
	if err != nil {
		return nil, 0, err
	}
	var e event.LogEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, 0, fmt.Errorf("the proof's entry does not read: %w", err)
	}
	return &e, n, nil
}
