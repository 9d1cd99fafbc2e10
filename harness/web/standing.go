package web

import (
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/internal/words"
)

// finalStanding is where a team stands in the final, as the board it may
// see shows it: the final's stage, its place, the cut, its next match.
type finalStanding struct {
	Stage string
	// Rank is its place of Of (0: not on the board), RankSet the places its
	// strength may hold.
	Rank, Of int
	RankSet  string
	// Level counts the other teams that share its place (a bracket's
	// teams still in it, teams no tie-break told apart).
	Level int
	// Cut is how many go on from a stages final's qualifier (0: none), In
	// whether the team is within it.
	Cut int
	In  bool
	// Out: the team plays no more games in the final (knocked out, or not
	// among the qualifier's teams that went on); its place stands.
	Out bool
	// Next is its next match paired and not over, Rival the other side.
	Next  *event.BoardPairing
	Rival string
	// Over: the final played its last game. Frozen: the board is as it
	// was at the freeze, so no match is shown to come.
	Over, Frozen bool
}

// Place is the rank as a place: "5th".
func (f *finalStanding) Place() string { return words.Ordinal(f.Rank) }

// standingOf is where team stands on board; nil when the final has not
// started or the team is not in it.
func standingOf(b *event.Board, team string) *finalStanding {
	if b == nil || team == "" || b.Run.Started.IsZero() {
		return nil
	}
	f := &finalStanding{Stage: b.Stage, Of: len(b.Standings), Cut: b.Cut,
		Over: !b.Run.Finished.IsZero() && b.Run.Error == "" && b.FrozenAt.IsZero(), Frozen: !b.FrozenAt.IsZero()}
	for i, r := range b.Standings {
		if r.Team == team {
			f.Rank, f.RankSet = r.Rank, rankSet(b.Standings, i)
			f.In = f.Cut > 0 && r.Rank <= f.Cut
			f.Out = r.Out
		}
	}
	if f.Rank == 0 {
		return nil
	}
	for _, r := range b.Standings {
		if r.Rank == f.Rank && r.Team != team {
			f.Level++
		}
	}
	for i, m := range b.Upcoming {
		if m.White == team || m.Black == team {
			f.Next, f.Rival = &b.Upcoming[i], m.White
			if m.White == team {
				f.Rival = m.Black
			}
			break
		}
	}
	return f
}

// rankSet says row i's 95% set of places: "3 to 9", or "3".
func rankSet(rows []event.BoardRow, i int) string {
	s := rows[i].RankSet
	if s.Low == 0 || s.Low == s.High {
		return ""
	}
	return words.Ordinal(s.Low) + " to " + words.Ordinal(s.High)
}
