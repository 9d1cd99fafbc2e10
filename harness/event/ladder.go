package event

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/ladder"
	"github.com/arenabots/arena/harness/rating"
	"github.com/arenabots/arena/harness/transcript"
)

// LadderGame is a rated game of the ladder.
const LadderGame = "ladder"

// LadderDir holds one tournament directory per ladder pair.
const LadderDir = "ladder"

// LadderPair is a pair of ladder games between two teams' submissions.
type LadderPair struct {
	ID    int64
	A, B  Side
	State string // playing or done
	// Opening is the name of the opening both games start from ("":
	// the game's own start).
	Opening string
}

// Standing is one line of the ladder.
type Standing struct {
	// Rank is the team's place among the rated teams; 0 for a team whose
	// active submission has no rated game yet (listed after the rated).
	Rank       int           `json:"rank"`
	Team       int64         `json:"team"`
	Name       string        `json:"name"`
	Bot        string        `json:"bot"` // the name the team's bot plays under
	Rating     rating.Rating `json:"rating"`
	Games      int           `json:"games"`
	Submission int64         `json:"submission"`
	SHA256     string        `json:"sha256"`
	Since      time.Time     `json:"since"`
}

// teamRating is a team's stored rating as it holds for submission: a new
// active submission keeps the team's rating with its deviation reset.
func (s *Store) teamRating(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, team, submission int64) (rating.Rating, int, error) {
	var r rating.Rating
	var sub int64
	var games int
	err := q.QueryRowContext(ctx, `SELECT submission, rating, deviation, volatility, games FROM ratings WHERE team_id = ?`, team).
		Scan(&sub, &r.Rating, &r.Deviation, &r.Volatility, &games)
	if errors.Is(err, sql.ErrNoRows) {
		return rating.Start(), 0, nil
	}
	if err != nil {
		return r, 0, err
	}
	if sub != submission {
		r = r.Reset()
	}
	return r, games, nil
}

// teamSubmission is an enabled team and its active submission.
type teamSubmission struct {
	team Team
	sub  Submission
}

// activeTeams are the enabled teams that have an active submission, by
// name: who plays on the ladder and in the final.
func (s *Store) activeTeams(ctx context.Context) ([]teamSubmission, error) {
	teams, err := s.Teams(ctx)
	if err != nil {
		return nil, err
	}
	return s.activeOf(ctx, teams)
}

// activeOf is activeTeams of teams, the event's every team as read.
func (s *Store) activeOf(ctx context.Context, teams []Team) ([]teamSubmission, error) {
	// Every enabled team's active submission in one query: an event of a
	// thousand teams asks for them on every ladder step and organizer's page.
	rows, err := s.read(ctx, `SELECT t.id, `+submissionColumns+` FROM teams t JOIN submissions s ON s.id = `+fmt.Sprintf(activeID, "t.id")+` WHERE t.disabled = 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	active := map[int64]Submission{}
	for rows.Next() {
		var team int64
		sub, err := scanSubmission(withFirst{rows, &team}, nil)
		if err != nil {
			return nil, err
		}
		active[team] = sub
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []teamSubmission
	for _, t := range teams {
		if sub, ok := active[t.ID]; ok && !t.Disabled {
			out = append(out, teamSubmission{t, sub})
		}
	}
	return out, nil
}

// lastPairQuery reads the last done ladder pair of team ?1: the newer of
// its last as a and its last as b, each one seek in its side's index (an
// OR of the two sides would read the done pairs back to the team's last).
const lastPairQuery = `SELECT a_team, b_team, finished FROM ladder_pairs WHERE id = (SELECT max(id) FROM (
	SELECT max(id) AS id FROM ladder_pairs WHERE a_team = ?1 AND state = 'done'
	UNION ALL SELECT max(id) FROM ladder_pairs WHERE b_team = ?1 AND state = 'done'))`

// withFirst scans a row's first column into first, the rest as asked.
type withFirst struct {
	row   interface{ Scan(...any) error }
	first any
}

func (w withFirst) Scan(dest ...any) error { return w.row.Scan(append([]any{w.first}, dest...)...) }

// LadderEntries are the teams that can play on the ladder: enabled, with an
// active submission; rated, with when and whom each last played, and what
// each pair of them met so far.
func (s *Store) LadderEntries(ctx context.Context) ([]ladder.Entry, error) {
	playing, err := s.activeTeams(ctx)
	if err != nil {
		return nil, err
	}
	var out []ladder.Entry
	var subs []int64
	for _, ts := range playing {
		t, sub := ts.team, ts.sub
		r, _, err := s.teamRating(ctx, s.r, t.ID, sub.ID)
		if err != nil {
			return nil, err
		}
		e := ladder.Entry{Team: t.ID, Submission: sub.ID, Rating: r, Active: sub.Uploaded}
		var a, b int64
		var fin string
		err = s.readRow(ctx, lastPairQuery, t.ID).Scan(&a, &b, &fin)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, err
		default:
			e.LastPlayed = parseTime(fin)
			e.LastOpponent = a
			if a == t.ID {
				e.LastOpponent = b
			}
		}
		out = append(out, e)
		subs = append(subs, sub.ID)
	}
	met, err := s.meetings(ctx, subs)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Met = met[out[i].Submission]
	}
	return out, nil
}

// meetingsQuery sums the done ladder pairs between the submissions in the
// JSON list ?1, by the submissions as a and as b: how many, the last that
// played a game, and whether that one only repeated games played already
// (SQLite takes a bare column from the row of its one max()).
const meetingsQuery = `SELECT a_submission, b_submission, count(*), max(CASE WHEN played > 0 THEN id END), repeats = played
	FROM ladder_pairs WHERE state = 'done' AND a_submission IN (SELECT value FROM json_each(?1)) AND b_submission IN (SELECT value FROM json_each(?1))
	GROUP BY a_submission, b_submission`

// meetings is what the ladder pairs between the submissions subs tell, by
// submission and rival submission.
func (s *Store) meetings(ctx context.Context, subs []int64) (map[int64]map[int64]ladder.Meeting, error) {
	list, err := json.Marshal(subs)
	if err != nil {
		return nil, err
	}
	rows, err := s.read(ctx, meetingsQuery, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// Each side's row of a meeting (a as a and b as b, then b as a): the
	// pairs are added, and the one whose last played pair is the newer
	// says whether the meeting is exhausted.
	type meeting struct {
		ladder.Meeting
		last int64
	}
	both := map[[2]int64]meeting{}
	for rows.Next() {
		var a, b, pairs int64
		var last sql.NullInt64
		var exhausted sql.NullBool
		if err := rows.Scan(&a, &b, &pairs, &last, &exhausted); err != nil {
			return nil, err
		}
		key := [2]int64{min(a, b), max(a, b)}
		m := both[key]
		m.Pairs += int(pairs)
		if last.Valid && last.Int64 > m.last {
			m.last, m.Exhausted = last.Int64, exhausted.Bool
		}
		both[key] = m
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[int64]map[int64]ladder.Meeting{}
	for key, m := range both {
		for _, p := range [][2]int64{key, {key[1], key[0]}} {
			if out[p[0]] == nil {
				out[p[0]] = map[int64]ladder.Meeting{}
			}
			out[p[0]][p[1]] = m.Meeting
		}
	}
	return out, nil
}

// StartLadderPair records that a pair of ladder games between a and b
// starts.
func (s *Store) StartLadderPair(ctx context.Context, a, b ladder.Entry, opening string) (LadderPair, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO ladder_pairs (a_team, b_team, a_submission, b_submission, state, created, opening)
		VALUES (?, ?, ?, ?, 'playing', ?, ?)`, a.Team, b.Team, a.Submission, b.Submission, now(), opening)
	if err != nil {
		return LadderPair{}, err
	}
	id, err := res.LastInsertId()
	return LadderPair{ID: id, A: Side{Team: a.Team, Submission: a.Submission}, B: Side{Team: b.Team, Submission: b.Submission},
		State: "playing", Opening: opening}, err
}

// PlayingLadderPairs are the pairs a stop interrupted.
func (s *Store) PlayingLadderPairs(ctx context.Context) ([]LadderPair, error) {
	rows, err := s.w.QueryContext(ctx, `SELECT id, a_team, b_team, a_submission, b_submission, opening FROM ladder_pairs WHERE state = 'playing' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LadderPair
	for rows.Next() {
		p := LadderPair{State: "playing"}
		if err := rows.Scan(&p.ID, &p.A.Team, &p.B.Team, &p.A.Submission, &p.B.Submission, &p.Opening); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// FinishLadderPair rates the pair's games (both teams from their ratings
// before the pair: one rating period) and marks it done, in one
// transaction. A game is scored by its winner: a bot that faulted lost; a
// draw is a draw. Games the host aborted are not among games and are never
// rated; nor is a game that repeats, move for move, an earlier ladder game
// of the same two submissions in the same colours (it is recorded, not
// counted again), nor any game of a pair that ends after uploads closed. It
// returns how many of the games were rated.
func (s *Store) FinishLadderPair(ctx context.Context, p LadderPair, games []Game) (rated int, err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var closed int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM closing`).Scan(&closed); err != nil {
		return 0, err
	}
	var count []Game
	repeats := 0
	for _, g := range games {
		if closed > 0 {
			break
		}
		var seen int
		if g.Course != "" {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM games WHERE kind = ? AND white_submission = ? AND black_submission = ?
				AND course = ? AND id < ?`, LadderGame, g.White.Submission, g.Black.Submission, g.Course, g.ID).Scan(&seen); err != nil {
				return 0, err
			}
		}
		if seen > 0 {
			repeats++
		} else {
			count = append(count, g)
			if _, err := tx.ExecContext(ctx, `UPDATE games SET rated = 1 WHERE id = ?`, g.ID); err != nil {
				return 0, err
			}
		}
	}
	if len(count) > 0 {
		ra, ga, err := s.teamRating(ctx, tx, p.A.Team, p.A.Submission)
		if err != nil {
			return 0, err
		}
		rb, gb, err := s.teamRating(ctx, tx, p.B.Team, p.B.Submission)
		if err != nil {
			return 0, err
		}
		var resA, resB []rating.Result
		for _, g := range count {
			scoreA := 0.5
			switch {
			case g.Winner == transcript.WinnerDraw:
			case (g.Winner == "white") == (g.White.Team == p.A.Team):
				scoreA = 1
			default:
				scoreA = 0
			}
			resA = append(resA, rating.Result{Opponent: rb, Score: scoreA})
			resB = append(resB, rating.Result{Opponent: ra, Score: 1 - scoreA})
		}
		for _, u := range []struct {
			side  Side
			r     rating.Rating
			games int
		}{{p.A, rating.Default.Update(ra, resA), ga + len(count)}, {p.B, rating.Default.Update(rb, resB), gb + len(count)}} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO ratings (team_id, submission, rating, deviation, volatility, games, updated)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (team_id) DO UPDATE SET submission = excluded.submission,
				rating = excluded.rating, deviation = excluded.deviation, volatility = excluded.volatility,
				games = excluded.games, updated = excluded.updated`,
				u.side.Team, u.side.Submission, u.r.Rating, u.r.Deviation, u.r.Volatility, u.games, now()); err != nil {
				return 0, err
			}
			// A pair recorded again keeps its point's number.
			if _, err := tx.ExecContext(ctx, `INSERT INTO rating_history (team_id, pair, submission, rating, deviation, at)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (team_id, pair) DO UPDATE SET submission = excluded.submission,
				rating = excluded.rating, deviation = excluded.deviation, at = excluded.at`,
				u.side.Team, p.ID, u.side.Submission, u.r.Rating, u.r.Deviation, now()); err != nil {
				return 0, err
			}
			if err := keepRatingPlot(ctx, tx, u.side.Team); err != nil {
				return 0, err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE ladder_pairs SET state = 'done', finished = ?, played = ?, repeats = ? WHERE id = ?`,
		now(), len(games), repeats, p.ID); err != nil {
		return 0, err
	}
	return len(count), tx.Commit()
}

// Ladder is the ladder's table: every team with an active submission, the
// rated by rating, then those with no rated game yet by name, unranked
// (a new player's 1500 ± 350 says nothing of its strength).
func (s *Store) Ladder(ctx context.Context) ([]Standing, error) {
	playing, err := s.activeTeams(ctx)
	if err != nil {
		return nil, err
	}
	var out []Standing
	for _, ts := range playing {
		t, sub := ts.team, ts.sub
		r, games, err := s.teamRating(ctx, s.r, t.ID, sub.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, Standing{Team: t.ID, Name: t.Name, Bot: t.BotName, Rating: r, Games: games, Submission: sub.ID, SHA256: sub.SHA256, Since: sub.Uploaded})
	}
	slices.SortStableFunc(out, func(x, y Standing) int {
		switch {
		case (x.Games > 0) != (y.Games > 0):
			if x.Games > 0 {
				return -1
			}
			return 1
		case x.Games == 0:
			return strings.Compare(x.Name, y.Name)
		case x.Rating.Rating > y.Rating.Rating:
			return -1
		case x.Rating.Rating < y.Rating.Rating:
			return 1
		}
		return 0
	})
	for i := range out {
		if out[i].Games > 0 {
			out[i].Rank = i + 1
		}
	}
	return out, nil
}

// RatingPoint is a team's rating after one rated ladder pair.
type RatingPoint struct {
	// Pair is the pair's number among the team's rated pairs, from 1.
	Pair       int     `json:"pair"`
	Submission int64   `json:"submission"`
	Rating     float64 `json:"rating"`
	Deviation  float64 `json:"deviation"`
}

// RatingHistory is team's rating after its rated ladder pairs, oldest
// first: after each of them, or, of more than most, one in every so many
// (a power of two: at least most/2 of them) with the first, the last and
// each of a new submission, each numbered as among all.
func (s *Store) RatingHistory(ctx context.Context, team int64, most int) ([]RatingPoint, error) {
	return ratingHistory(ctx, s.read, team, most)
}

// ratingHistory is RatingHistory read by query.
func ratingHistory(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error), team int64, most int) ([]RatingPoint, error) {
	// Each number is scanned as the driver gives it: database/sql turns
	// an int64 into an int by way of a string.
	var last RatingPoint
	var n int64
	rows, err := query(ctx, lastRatingPointQuery, team)
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		return nil, errors.Join(rows.Err(), rows.Close()) // no rated pair yet
	}
	err = rows.Scan(&n, &last.Submission, &last.Rating, &last.Deviation)
	if err = errors.Join(err, rows.Close()); err != nil {
		return nil, err
	}
	last.Pair = int(n)
	step := 1
	for (last.Pair+step-1)/step > max(most, 1) {
		step *= 2
	}
	rows, err = query(ctx, ratingHistoryQuery, team, step)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]RatingPoint, 0, min(last.Pair, most+8))
	for rows.Next() {
		var p RatingPoint
		if err := rows.Scan(&n, &p.Submission, &p.Rating, &p.Deviation); err != nil {
			return nil, err
		}
		p.Pair = int(n)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b RatingPoint) int { return a.Pair - b.Pair })
	if len(out) == 0 || out[len(out)-1].Pair != last.Pair {
		out = append(out, last)
	}
	return out, nil
}

// lastRatingPointQuery reads a team's last rating point.
const lastRatingPointQuery = `SELECT n, submission, rating, deviation FROM rating_history WHERE team_id = ? ORDER BY pair DESC LIMIT 1`

// ratingHistoryQuery reads the points of a team (?1) of a stride of ?2 or
// more from rating_history_stride alone, by their stride then number: the
// points left out are never read.
const ratingHistoryQuery = `SELECT n, submission, rating, deviation FROM rating_history WHERE team_id = ?1 AND stride >= ?2`

// PlayingTeams are the enabled teams with a submission that plays (passed
// or admitted): the ones a challenge can meet.
func (s *Store) PlayingTeams(ctx context.Context) (map[int64]bool, error) {
	playing, err := s.activeTeams(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for _, ts := range playing {
		out[ts.team.ID] = true
	}
	return out, nil
}
