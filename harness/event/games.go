package event

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/words"
)

// Game kinds.
const (
	// ValidationGame is a full match a validation played against the
	// built-in random bot.
	ValidationGame = "validation"
)

// Side is one player of a game: a team's submission, or a built-in bot
// (Team and Submission 0).
type Side struct {
	Team       int64  `json:"team,omitempty"`
	Submission int64  `json:"submission,omitempty"`
	Name       string `json:"name"`
	SHA256     string `json:"sha256"`
}

// Game is one played game of the event.
type Game struct {
	ID     int64  `json:"id"`
	Kind   string `json:"kind"`
	White  Side   `json:"white"`
	Black  Side   `json:"black"`
	Winner string `json:"winner"`
	Reason string `json:"reason"`
	Plies  int    `json:"plies"`
	// Turns counts every turn, setup included: a game lost in its setup
	// has turns but no play ply (0 for a game recorded before turns were).
	Turns    int       `json:"turns"`
	Finished time.Time `json:"finished"`
	// Rated: a ladder game that counted for the ratings (a repeat of an
	// earlier game of the same two submissions, move for move, does not).
	Rated bool `json:"rated,omitempty"`
	// Dir is the match directory, relative to the event directory.
	Dir string `json:"-"`
	// Course is the game move for move (transcript.Course): read with a
	// game alone (Game, AddGame, GamesOf), left empty by the lists.
	Course string `json:"-"`
}

// Length says how long the game went as a person reads it: "34 turns (16
// play plies)", or its play plies alone for a game recorded before its
// turns were.
func (g Game) Length() string {
	switch {
	case g.Turns == 0 && g.Plies == 0:
		return "no turn"
	case g.Turns == 0:
		return words.Plural(g.Plies, "play ply")
	}
	return fmt.Sprintf("%s (%s)", words.Plural(g.Turns, "turn"), words.Plural(g.Plies, "play ply"))
}

// Involves says whether team played in the game.
func (g Game) Involves(team int64) bool {
	return team != 0 && (g.White.Team == team || g.Black.Team == team)
}

// MatchDir is the game's match directory.
func (s *Store) MatchDir(g Game) string { return filepath.Join(s.Dir, g.Dir) }

func nullable(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// AddGame records a game played in dir (inside the event directory) from
// its result.json; the sides' names and hashes are the result's. slotMs is
// how long the game held its place among the games played at once
// (tournament.Times.SlotMs; 0: not known), the pace the final's estimate
// takes.
func (s *Store) AddGame(ctx context.Context, kind, dir string, white, black Side, slotMs float64) (Game, error) {
	rel, err := filepath.Rel(s.Dir, dir)
	if err != nil {
		return Game{}, err
	}
	data, err := os.ReadFile(filepath.Join(dir, transcript.ResultFile))
	if err != nil {
		return Game{}, err
	}
	var res transcript.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return Game{}, fmt.Errorf("%s: %w", filepath.Join(dir, transcript.ResultFile), err)
	}
	if white.Team != 0 && white.Team == black.Team {
		// The game lists count a team's games as its white ones and its
		// black ones: no game is both.
		return Game{}, fmt.Errorf("record %s: team %d on both sides; a team never plays itself", rel, white.Team)
	}
	white.Name, white.SHA256, black.Name, black.SHA256 = res.White.Name, res.White.SHA256, res.Black.Name, res.Black.SHA256
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return Game{}, fmt.Errorf("%s: %w", filepath.Join(dir, transcript.FileName), err)
	}
	course, err := transcript.Course(lines)
	if err != nil {
		return Game{}, fmt.Errorf("%s: %w", filepath.Join(dir, transcript.FileName), err)
	}
	g := Game{Kind: kind, White: white, Black: black, Winner: res.Winner, Reason: res.Reason, Plies: res.Plies, Turns: res.TurnsPlayed(),
		Finished: time.Now().UTC(), Dir: rel, Course: course}
	// A game is recorded once: a resumed scrimmage records its games again.
	start := time.Now()
	r, err := s.w.ExecContext(ctx, `INSERT OR IGNORE INTO games (kind, white_team, black_team, white_submission, black_submission,
		white_name, black_name, white_sha256, black_sha256, dir, winner, reason, plies, turns, finished, course, duration_ms, slot_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, kind, nullable(white.Team), nullable(black.Team),
		nullable(white.Submission), nullable(black.Submission), white.Name, black.Name, white.SHA256, black.SHA256,
		rel, g.Winner, g.Reason, g.Plies, g.Turns, g.Finished.Format(time.RFC3339Nano), course, res.DurationMs, slotMs)
	if err != nil {
		return Game{}, err
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return Game{}, err
		}
		return scanGame(s.w.QueryRowContext(ctx, `SELECT `+gameColumns+` FROM games WHERE dir = ?`, rel))
	}
	s.timed(start)
	s.observeGame(kind, g.Winner, lines)
	g.ID, err = r.LastInsertId()
	return g, err
}

// gameListColumns are a game's columns as its lists read them: all but
// its course, which only the ladder reads (of a game it records).
const gameListColumns = `id, kind, white_team, black_team, white_submission, black_submission, white_name, black_name,
	white_sha256, black_sha256, dir, winner, reason, plies, turns, finished, rated`

// gameColumns are every column of a game.
const gameColumns = gameListColumns + `, course`

// listedGame is a game's gameListColumns as a list reads them: as one
// (jsonRow), for scanListedGames.
var listedGame = jsonRow(gameListColumns)

// scanGame reads a game's gameColumns.
func scanGame(row interface{ Scan(...any) error }) (Game, error) {
	return newGameScanner(true).scan(row)
}

// scanListedGames reads games' listedGame, row after row.
func scanListedGames() func(interface{ Scan(...any) error }) (Game, error) {
	return newGameScanner(false).scanListed
}

// gameScanner reads a game's columns, row after row, into the same
// places: a list reads thousands of columns, and a row's own places would
// be a dozen allocations.
type gameScanner struct {
	g                                Game
	id, wt, bt, ws, bs, plies, turns any
	fin                              string
	dest                             []any
	// listed are the places of gameListColumns, read from a listedGame.
	listed []any
	row    sql.RawBytes
}

// newGameScanner reads gameColumns, or a listedGame.
func newGameScanner(course bool) *gameScanner {
	s := &gameScanner{}
	g := &s.g
	if !course {
		s.listed = []any{&g.ID, &g.Kind, &g.White.Team, &g.Black.Team, &g.White.Submission, &g.Black.Submission, &g.White.Name, &g.Black.Name,
			&g.White.SHA256, &g.Black.SHA256, &g.Dir, &g.Winner, &g.Reason, &g.Plies, &g.Turns, &s.fin, &g.Rated}
		return s
	}
	s.dest = []any{&s.id, &g.Kind, &s.wt, &s.bt, &s.ws, &s.bs, &g.White.Name, &g.Black.Name, &g.White.SHA256, &g.Black.SHA256,
		&g.Dir, &g.Winner, &g.Reason, &s.plies, &s.turns, &s.fin, &g.Rated, &g.Course}
	return s
}

func (s *gameScanner) scan(row interface{ Scan(...any) error }) (Game, error) {
	s.g = Game{}
	err := row.Scan(s.dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return Game{}, ErrNotFound
	}
	g := s.g
	g.ID, g.White.Team, g.Black.Team, g.White.Submission, g.Black.Submission = integer(s.id), integer(s.wt), integer(s.bt), integer(s.ws), integer(s.bs)
	g.Plies, g.Turns = int(integer(s.plies)), int(integer(s.turns))
	g.Finished = parseTime(s.fin)
	return g, err
}

// scanListed reads a listedGame.
func (s *gameScanner) scanListed(row interface{ Scan(...any) error }) (Game, error) {
	s.g, s.fin = Game{}, ""
	if err := row.Scan(&s.row); err != nil {
		return Game{}, err
	}
	if err := scanJSONRow(s.row, s.listed...); err != nil {
		return Game{}, fmt.Errorf("a game's row: %w", err)
	}
	g := s.g
	g.Finished = parseTime(s.fin)
	return g, nil
}

// integer is an INTEGER column (0 for NULL) scanned as the driver gives
// it: a list reads thousands, and database/sql converts each into an
// int64 by reflection, or into an int by way of a string.
func integer(v any) int64 {
	n, _ := v.(int64)
	return n
}

// Game is the game with that id.
func (s *Store) Game(ctx context.Context, id int64) (Game, error) {
	return scanGame(s.readRow(ctx, `SELECT `+gameColumns+` FROM games WHERE id = ?`, id))
}

// GamesOf lists the last n games a team played, newest first.
func (s *Store) GamesOf(ctx context.Context, team int64, n int) ([]Game, error) {
	// Each side's newest n by its index, then the newest n of both: the
	// team's older games are never read.
	return s.games(ctx, `SELECT * FROM (SELECT `+gameColumns+` FROM games WHERE white_team = ?1 ORDER BY id DESC LIMIT ?2)
		UNION ALL SELECT * FROM (SELECT `+gameColumns+` FROM games WHERE black_team = ?1 AND (white_team IS NULL OR white_team != ?1)
		ORDER BY id DESC LIMIT ?2) ORDER BY id DESC LIMIT ?2`, team, n)
}

// GamesOfSubmission lists the games a submission played, oldest first.
func (s *Store) GamesOfSubmission(ctx context.Context, sub int64) ([]Game, error) {
	return readAll(ctx, s, scanListedGames(), gamesOfSubmissionQuery, sub)
}

// gamesOfSubmissionQuery reads a submission's games by the index of each
// side (an OR of the two would read every game).
var gamesOfSubmissionQuery = `SELECT ` + listedGame + ` FROM games WHERE id IN
	(SELECT id FROM games WHERE white_submission = ?1 UNION SELECT id FROM games WHERE black_submission = ?1) ORDER BY id`

func (s *Store) games(ctx context.Context, q string, args ...any) ([]Game, error) {
	return readAll(ctx, s, scanGame, q, args...)
}

// ForgetValidationGames removes the games an earlier validation of sub
// recorded (it is being validated again).
func (s *Store) ForgetValidationGames(ctx context.Context, sub int64) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM games WHERE kind = ? AND (white_submission = ?2 OR black_submission = ?2)`, ValidationGame, sub)
	return err
}

// GameQuery picks games from the event's list.
type GameQuery struct {
	// Team, when set, keeps the games the team played.
	Team int64
	// Kind, when set, keeps the games of that kind (ValidationGame,
	// ScrimmageGame, LadderGame, FinalGame).
	Kind string
	// Offset skips the newest Offset games; Limit caps the list.
	Offset, Limit int
}

// GameKinds are the kinds of games an event plays.
var GameKinds = []string{ValidationGame, ScrimmageGame, LadderGame, FinalGame}

// ListGames lists the games q picks, newest first, and how many it picks
// in all.
func (s *Store) ListGames(ctx context.Context, q GameQuery) ([]Game, int, error) {
	count, _ := listGamesQueries(q)
	var total int
	if count == "" {
		n, _, err := s.TeamGames(ctx, q.Team, q.Kind)
		if err != nil {
			return nil, 0, err
		}
		total = int(n)
	} else if err := s.readRow(ctx, count, q.Team, q.Kind).Scan(&total); err != nil {
		return nil, 0, err
	}
	games, err := s.GamesPage(ctx, q)
	return games, total, err
}

// GamesPage is ListGames' page of games without their count: for a
// caller that has it already (TeamGames').
func (s *Store) GamesPage(ctx context.Context, q GameQuery) ([]Game, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	_, list := listGamesQueries(q)
	return readAll(ctx, s, scanListedGames(), list, q.Team, q.Kind, q.Limit, q.Offset)
}

// TeamGames is how many games team played (of kind; "": of every kind),
// and how many times its games changed (a game recorded, rated or
// removed): a list of its games is the same while changes is. Triggers
// keep both as games are written, by this process or another.
func (s *Store) TeamGames(ctx context.Context, team int64, kind string) (n, changes int64, err error) {
	err = s.readRow(ctx, teamGamesQuery, team, kind).Scan(&n, &changes)
	return n, changes, err
}

// teamGamesQuery reads TeamGames' two numbers, of a team and a kind.
const teamGamesQuery = `SELECT COALESCE(SUM(n), 0), COALESCE(SUM(changes), 0) FROM team_games WHERE team = ?1 AND (?2 = '' OR kind = ?2)`

// listGamesQueries are ListGames' count (none of a team's games: TeamGames
// counts them) and list, each filter by its index: a team's games by each
// side's (with the kind, when asked), a kind's by games_kind. Both read ids
// from the indexes alone; the list then reads the page's rows, and no
// other. Their arguments are the team, the kind, the limit and the offset.
func listGamesQueries(q GameQuery) (count, list string) {
	page := ` ORDER BY 1 DESC LIMIT ?3 OFFSET ?4`
	var ids string
	switch {
	case q.Team != 0:
		// A team's white games and its black ones (never both: AddGame),
		// each by its side's index, merged newest first.
		kind := ` AND ?2 = ?2`
		if q.Kind != "" {
			kind = ` AND kind = ?2`
		}
		// Their count is TeamGames'.
		ids = `SELECT id FROM games WHERE white_team = ?1` + kind + ` UNION ALL SELECT id FROM games WHERE black_team = ?1` + kind + page
	case q.Kind != "":
		count = `SELECT count(*) FROM games WHERE kind = ?2 AND ?1 = ?1`
		ids = `SELECT id FROM games WHERE kind = ?2 AND ?1 = ?1` + page
	default:
		count = `SELECT count(*) FROM games WHERE ?1 = ?1 AND ?2 = ?2`
		ids = `SELECT id FROM games WHERE ?1 = ?1 AND ?2 = ?2` + page
	}
	return count, `SELECT ` + listedGame + ` FROM games WHERE id IN (` + ids + `) ORDER BY id DESC`
}

// HostReplays records how many tries of the games of the tournament in dir
// (a ladder pair, a scrimmage, the final) were played again because the host
// kept a bot waiting for a CPU past its turn's cap, and how many because
// their sandbox failed (a Pod lost, a container gone, a worker that could
// not play it: tries that ended with no result, neither refused nor the
// host's load); recorded again, never added twice, when the tournament
// resumes.
func (s *Store) HostReplays(ctx context.Context, kind, dir string, recs []tournament.Record) error {
	busy, faults := 0, 0
	for _, r := range recs {
		busy += r.HostBusy
		if r.Status == tournament.Done {
			faults += max(r.Tries-r.HostBusy-r.Rejected, 0)
		}
	}
	if busy == 0 && faults == 0 {
		return nil
	}
	rel, err := filepath.Rel(s.Dir, dir)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO host_replays (dir, kind, n, faults) VALUES (?, ?, ?, ?)
		ON CONFLICT(dir) DO UPDATE SET n = excluded.n, faults = excluded.faults`, rel, kind, busy, faults)
	return err
}

// Replays are the games of a kind played again, for the host's load
// (Busy) and for their sandbox's failure (Faults): never charged to a
// team.
type Replays struct {
	Busy, Faults int
}

// HostReplayCounts are the games played again, by kind of game.
func (s *Store) HostReplayCounts(ctx context.Context) (map[string]Replays, error) {
	rows, err := s.read(ctx, `SELECT kind, SUM(n), SUM(faults) FROM host_replays GROUP BY kind`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Replays{}
	for rows.Next() {
		var kind string
		var r Replays
		if err := rows.Scan(&kind, &r.Busy, &r.Faults); err != nil {
			return nil, err
		}
		out[kind] = r
	}
	return out, rows.Err()
}
