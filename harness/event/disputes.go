package event

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/transcript"
)

// Dispute states.
const (
	DisputeOpen     = "open"
	DisputeAnswered = "answered"
)

// DisputesDir holds what each dispute's reruns printed and returned, one
// directory per dispute.
const DisputesDir = "disputes"

// Dispute limits: the longest message, and how many disputes a team may
// have open at once.
const (
	MaxDisputeMessage = 4000
	MaxOpenDisputes   = 5
)

// Dispute is a team's complaint about one of its games, the replay's
// verdict of that game when it was filed, the organizer's rerun of a turn
// and answer.
type Dispute struct {
	ID      int64     `json:"id"`
	Game    int64     `json:"game"`
	Team    int64     `json:"team"`
	Message string    `json:"message"`
	Filed   time.Time `json:"filed"`
	// Verdict is arena replay's verdict of the game's transcript when the
	// dispute was filed.
	Verdict  string    `json:"verdict"`
	State    string    `json:"state"`
	Answer   string    `json:"answer,omitempty"`
	Answered time.Time `json:"answered,omitzero"`
	// RerunPly is the turn the organizer ran again (before that: the turn
	// proposed, the disputing side's first fault or the game's last turn);
	// Rerun is what the rerun printed ("" before one).
	RerunPly int    `json:"rerunPly"`
	Rerun    string `json:"rerun,omitempty"`
	// Reruns are every rerun of the dispute, in the order they ran: the
	// team sees each turn the organizer ran again, not the last alone.
	Reruns []DisputeRerun `json:"reruns"`
}

// DisputeRerun is one turn of a disputed game run again, and what it
// printed.
type DisputeRerun struct {
	Ply int `json:"ply"`
	// Side is whose turn it was ("white" or "black"; "" when not known).
	Side string    `json:"side,omitempty"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	// public is Text without the side's own output (its stderr): what
	// anyone else may read of it ("": nothing but that it ran).
	public string
}

// HiddenRerun stands for the text of a rerun kept before reruns kept a
// public text: only the organizer and the side's team read it.
const HiddenRerun = "(this turn was the other side's: what its bot printed is its own)"

// SeenBy is d as a viewer may see it who keeps the output of side keep
// ("white" or "black") and, when redact, of no other: every rerun of a
// turn of another side shows its public text alone, without the bot's own
// output. The caller decides keep and redact for the viewer and the game
// as it does for the game's transcript.
func (d Dispute) SeenBy(keep string, redact bool) Dispute {
	if !redact {
		return d
	}
	reruns := make([]DisputeRerun, len(d.Reruns))
	for i, r := range d.Reruns {
		if r.Side == "" || r.Side != keep {
			r.Text = r.public
			if r.Text == "" {
				r.Text = HiddenRerun
			}
		}
		r.public = ""
		reruns[i] = r
	}
	d.Reruns = reruns
	if n := len(reruns); n > 0 {
		d.Rerun = reruns[n-1].Text
	} else if d.Rerun != "" {
		d.Rerun = HiddenRerun
	}
	return d
}

// disputeColumns are a dispute's columns, its reruns as one JSON array
// read by their index.
const disputeColumns = `id, game_id, team_id, message, filed, verdict, state, answer, answered, rerun_ply, rerun,
	(SELECT json_group_array(json_object('ply', ply, 'side', side, 'text', text, 'public', public, 'at', at)) FROM
		(SELECT ply, side, text, public, at FROM dispute_reruns r WHERE r.dispute_id = disputes.id ORDER BY r.id))`

func scanDispute(row interface{ Scan(...any) error }) (Dispute, error) {
	var d Dispute
	var filed, answered, reruns string
	err := row.Scan(&d.ID, &d.Game, &d.Team, &d.Message, &filed, &d.Verdict, &d.State, &d.Answer, &answered, &d.RerunPly, &d.Rerun, &reruns)
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, err
	}
	d.Filed, d.Answered = parseTime(filed), parseTime(answered)
	var rows []struct {
		Ply    int    `json:"ply"`
		Side   string `json:"side"`
		Text   string `json:"text"`
		Public string `json:"public"`
		At     string `json:"at"`
	}
	if err := json.Unmarshal([]byte(reruns), &rows); err != nil {
		return d, fmt.Errorf("dispute %d's reruns: %w", d.ID, err)
	}
	d.Reruns = make([]DisputeRerun, 0, len(rows))
	for _, r := range rows {
		d.Reruns = append(d.Reruns, DisputeRerun{Ply: r.Ply, Side: r.Side, Text: r.Text, public: r.Public, At: parseTime(r.At)})
	}
	return d, nil
}

// cleanText is a team's or the organizer's text as stored: valid UTF-8,
// trimmed, within n bytes.
func cleanText(what, text string, n int) (string, error) {
	text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	switch {
	case text == "":
		return "", &RefusedError{Msg: "the " + what + " is empty: say what is wrong"}
	case len(text) > n:
		return "", &RefusedError{Msg: fmt.Sprintf("the %s is %d bytes; at most %d", what, len(text), n)}
	}
	return text, nil
}

// FileDispute records team's dispute of game g with message, with judge's
// verdict of the game's transcript (in the match directory dir, for the
// disputing team's side) and the turn a rerun would start from; a team has
// at most MaxOpenDisputes open at once.
func (s *Store) FileDispute(ctx context.Context, team int64, g Game, message string, judge func(dir, side string) (verdict string, ply int)) (Dispute, error) {
	if !g.Involves(team) {
		return Dispute{}, &RefusedError{Msg: "a team disputes only its own games"}
	}
	message, err := cleanText("message", message, MaxDisputeMessage)
	if err != nil {
		return Dispute{}, err
	}
	var open int
	if err := s.readRow(ctx, `SELECT count(*) FROM disputes WHERE team_id = ? AND state = ?`, team, DisputeOpen).Scan(&open); err != nil {
		return Dispute{}, err
	}
	if open >= MaxOpenDisputes {
		return Dispute{}, &QuotaError{Msg: fmt.Sprintf("%d disputes of yours are open: wait for the organizer's answers", open)}
	}
	side := transcript.WinnerWhite
	if g.Black.Team == team && g.White.Team != team {
		side = transcript.WinnerBlack
	}
	verdict, ply := judge(s.MatchDir(g), side)
	r, err := s.w.ExecContext(ctx, `INSERT INTO disputes (game_id, team_id, message, filed, verdict, rerun_ply) VALUES (?, ?, ?, ?, ?, ?)`,
		g.ID, team, message, now(), verdict, ply)
	if err != nil {
		return Dispute{}, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return Dispute{}, err
	}
	return s.Dispute(ctx, id)
}

// Dispute is the dispute with that id.
func (s *Store) Dispute(ctx context.Context, id int64) (Dispute, error) {
	return scanDispute(s.readRow(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE id = ?`, id))
}

// Disputes lists disputes, newest first: team's (every team's for 0),
// of game (any for 0), the open ones only if open.
func (s *Store) Disputes(ctx context.Context, team, game int64, open bool) ([]Dispute, error) {
	return readAll(ctx, s, scanDispute, disputesQuery(team, game, open), team, game, boolInt(open))
}

// disputesQuery reads Disputes' list, its arguments the team, the game and
// whether only the open ones: by the index of the narrowest filter asked
// (a game's, a team's, the open ones'), so that no page reads every
// dispute of the event.
func disputesQuery(team, game int64, open bool) string {
	filters := `(?1 = 0 OR team_id = ?1) AND (?2 = 0 OR game_id = ?2) AND (?3 = 0 OR state = 'open')`
	switch {
	case game != 0:
		filters = `game_id = ?2 AND ` + filters
	case team != 0:
		filters = `team_id = ?1 AND ` + filters
	case open:
		filters = `state = 'open' AND ` + filters
	}
	return `SELECT ` + disputeColumns + ` FROM disputes WHERE ` + filters + ` ORDER BY id DESC LIMIT 200`
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AnswerDispute records the organizer's answer and closes the dispute.
// Answering again keeps the earlier answer: the new one follows it under
// "Answered again at TIME:", so the team reads what changed.
func (s *Store) AnswerDispute(ctx context.Context, id int64, answer string) (Dispute, error) {
	answer, err := cleanText("answer", answer, MaxDisputeMessage)
	if err != nil {
		return Dispute{}, err
	}
	err = s.act(ctx, ActionAnswer, func(tx *sql.Tx) (string, error) {
		var game, team int64
		at := now()
		err := tx.QueryRowContext(ctx, `UPDATE disputes SET answer = CASE WHEN answer = '' THEN ?1
			ELSE answer || char(10) || char(10) || 'Answered again at ' || ?5 || ':' || char(10) || ?1 END,
			answered = ?2, state = ?3 WHERE id = ?4 RETURNING game_id, team_id`,
			answer, at, DisputeAnswered, id, parseTime(at).Format("2006-01-02 15:04 UTC")).Scan(&game, &team)
		if errors.Is(err, sql.ErrNoRows) {
			return "", ErrNotFound
		}
		var name string
		if err == nil {
			err = tx.QueryRowContext(ctx, `SELECT name FROM teams WHERE id = ?`, team).Scan(&name)
		}
		return fmt.Sprintf("dispute #%d of %s on game #%d: %s", id, name, game, answer), err
	})
	if err != nil {
		return Dispute{}, err
	}
	return s.Dispute(ctx, id)
}

// firstLine is text's first line.
func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return line
}

// AddRerun records the rerun of turn ply of game (the game dispute id is
// about), a turn of side, as text (public: without the side's own output):
// the dispute's latest rerun, and one more in its list.
func (s *Store) AddRerun(ctx context.Context, id, game int64, ply int, side, text, public string) error {
	return s.act(ctx, ActionRerun, func(tx *sql.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE disputes SET rerun_ply = ?, rerun = ? WHERE id = ?`, ply, text, id); err != nil {
			return "", err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO dispute_reruns (dispute_id, ply, side, text, public, at) VALUES (?, ?, ?, ?, ?, ?)`, id, ply, side, text, public, now())
		return fmt.Sprintf("turn %d of game %d for dispute %d (%s)", ply, game, id, firstLine(text)), err
	})
}
