package web

import (
	"context"
	"net/http"
	"time"

	"github.com/arenabots/arena/harness/event"
)

type homeData struct {
	// ClosedAt is when the organizer closed uploads for the final.
	ClosedAt time.Time
	// Final is the final's scoreboard as the asker may see it.
	Final   boardData
	Ladder  []event.Standing
	Teams   []event.Team
	Rules   string
	Open    bool
	Closes  time.Time
	Opens   time.Time
	Enabled int
	// Plays are the teams with a submission that plays; CanChallenge says
	// whether the asker (a team) may challenge now: uploads open, a
	// submission of its own that plays, scrimmages allowed.
	Plays        map[int64]bool
	CanChallenge bool
	// Standing is where the asker's team stands in the final (nil: not
	// a team's page, or not in the final).
	Standing *finalStanding
	// LogKey is the public key of the event's log, published before the
	// final: what a team checks the final's checkpoints with; LogsLadder
	// says the log holds the ladder's games too.
	LogKey     string
	LogsLadder bool
	// Witnesses are the log's witnesses (their keys: what a team checks
	// their cosignatures with).
	Witnesses []event.Witness
	// Playing are the games playing now that the asker may watch.
	Playing []liveRow
}

// homeTTL is how long the page a visitor who is not logged in gets is
// reused: it is the page asked for most, the same for everyone, and a team
// added shows a second later.
const homeTTL = time.Second

func (s *Server) home(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if p != nil {
		d, err := s.homeData(r, p)
		if err != nil {
			return err
		}
		return s.render(w, r, p, http.StatusOK, "home", "", d)
	}
	s.homeMu.Lock()
	defer s.homeMu.Unlock()
	if time.Since(s.homeAt) > homeTTL {
		d, err := s.homeData(r, nil)
		if err != nil {
			return err
		}
		if s.homePage, err = s.pageBytes(r, nil, "home", "", d); err != nil {
			return err
		}
		s.homeAt = time.Now()
	}
	pageHeader(w)
	_, err := w.Write(s.homePage)
	return err
}

// deadline is what the home page says of the uploads' deadline: open,
// closing at, or closed at.
func (s *Server) deadline(ctx context.Context) (homeData, error) {
	d := homeData{Open: s.Config.Open(time.Now()), Closes: s.Config.Closes.Time, Opens: s.Config.Opens.Time}
	if at, closed, err := s.Store.Closed(ctx); err != nil {
		return homeData{}, err
	} else if closed {
		d.Open, d.ClosedAt = false, at
	}
	return d, nil
}

// deadlineFragment is the home page's deadline, for the page to refresh
// without a reload when uploads close.
func (s *Server) deadlineFragment(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	d, err := s.deadline(r.Context())
	if err != nil {
		return err
	}
	return writeFragment(w, "home", "deadline", d)
}

func (s *Server) homeData(r *http.Request, p *event.Principal) (homeData, error) {
	teams, err := s.Store.Teams(r.Context())
	if err != nil {
		return homeData{}, err
	}
	d, err := s.deadline(r.Context())
	if err != nil {
		return homeData{}, err
	}
	d.Rules = s.Game.Explain()
	if _, d.LogKey, err = s.Store.LogKeys(); err != nil {
		return homeData{}, err
	}
	d.LogsLadder, d.Witnesses = s.Config.Log.Ladder, s.Config.Log.WitnessList()
	if d.Playing, err = s.playing(r.Context(), p); err != nil {
		return homeData{}, err
	}
	if d.Final.Board, d.Final.HTML, err = s.board(r.Context(), p); err != nil {
		return homeData{}, err
	}
	d.Final.Admin = p != nil && p.Admin
	if p != nil && !p.Admin {
		d.Standing = standingOf(d.Final.Board, p.Name)
	}
	if s.Config.Ladder.Enabled {
		if d.Ladder, err = s.Store.Ladder(r.Context()); err != nil {
			return homeData{}, err
		}
	}
	for _, t := range teams {
		if !t.Disabled {
			d.Teams = append(d.Teams, event.Team{ID: t.ID, Name: t.Name})
		}
	}
	if p != nil && !p.Admin {
		if d.Plays, err = s.Store.PlayingTeams(r.Context()); err != nil {
			return homeData{}, err
		}
		d.CanChallenge = d.ClosedAt.IsZero() && d.Plays[p.Team] && s.Config.Quotas.ScrimmagesPerHour > 0
	}
	return d, nil
}
