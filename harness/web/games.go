package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
)

// gameRow is a game as a list shows it to a team (Me its colour, Rival the
// other side's name) or to the organizer (both sides' names).
type gameRow struct {
	event.Game
	Me           string // "white" or "black"; "" for the organizer
	Rival        string
	WhiteName    string
	BlackName    string
	Result       string
	MySubmission int64 // the submission of the asker's team that played
}

// gameRows are games as team sees them (0: the organizer), each side named
// as people read it.
func gameRows(games []event.Game, team int64, names event.TeamNames) []gameRow {
	var out []gameRow
	for _, g := range games {
		row := gameRow{Game: g, WhiteName: names.Of(g.White), BlackName: names.Of(g.Black)}
		if team != 0 {
			row.Me, row.Rival, row.MySubmission = "white", row.BlackName, g.White.Submission
			if g.Black.Team == team && g.White.Team != team {
				row.Me, row.Rival, row.MySubmission = "black", row.WhiteName, g.Black.Submission
			}
		}
		switch g.Winner {
		case transcript.WinnerDraw:
			row.Result = "draw"
		case "white", "black":
			switch row.Me {
			case "":
				row.Result = g.Winner + " won"
			case g.Winner:
				row.Result = "won"
			default:
				row.Result = "lost"
			}
		default:
			row.Result = "no result"
		}
		out = append(out, row)
	}
	return out
}

// gamesPerPage is how many games a page of the games list shows.
const gamesPerPage = 25

type gamesData struct {
	Games []gameRow
	Kinds []string
	Kind  string
	// Team is the team whose games are listed (0: every team's, for the
	// organizer); Teams the teams the organizer may pick.
	Team        int64
	Teams       []event.Team
	Admin       bool
	Page, Pages int
	Total       int
	First, Last int
}

// link is the list's address with page (and the same filters).
func (d gamesData) Link(page int) string {
	v := url.Values{}
	if d.Kind != "" {
		v.Set("kind", d.Kind)
	}
	if d.Admin && d.Team != 0 {
		v.Set("team", fmt.Sprint(d.Team))
	}
	if page > 1 {
		v.Set("page", fmt.Sprint(page))
	}
	if len(v) == 0 {
		return "/games"
	}
	return "/games?" + v.Encode()
}

// KindLink is the list's address filtered by kind ("": every kind), from
// its first page.
func (d gamesData) KindLink(kind string) string {
	d.Kind = kind
	return d.Link(1)
}

// gamesPage lists games, newest first, a page at a time, filtered by kind:
// a team's own (validation, scrimmage, ladder, final), or for the organizer
// every team's or one team's.
func (s *Server) gamesPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	q := r.URL.Query()
	d := gamesData{Kinds: event.GameKinds, Kind: q.Get("kind"), Admin: p.Admin, Page: 1}
	if d.Kind != "" && !slices.Contains(event.GameKinds, d.Kind) {
		return &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("there is no kind of game %q", d.Kind)}
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("page must be a number from 1, got %q", v)}
		}
		d.Page = n
	}
	d.Team = p.Team
	if p.Admin {
		if v := q.Get("team"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("team must be a team's number, got %q", v)}
			}
			d.Team = n
		}
	}
	games, total, err := s.Store.ListGames(r.Context(), event.GameQuery{Team: d.Team, Kind: d.Kind,
		Offset: (d.Page - 1) * gamesPerPage, Limit: gamesPerPage})
	if err != nil {
		return err
	}
	names, err := s.Store.Names(r.Context())
	if err != nil {
		return err
	}
	asker := p.Team
	if p.Admin {
		asker = d.Team
		if d.Teams, err = s.Store.Teams(r.Context()); err != nil {
			return err
		}
	}
	d.Games = gameRows(games, asker, names)
	d.Total, d.Pages = total, max(1, (total+gamesPerPage-1)/gamesPerPage)
	if len(games) > 0 {
		d.First, d.Last = (d.Page-1)*gamesPerPage+1, (d.Page-1)*gamesPerPage+len(games)
	}
	title := "Your games"
	if p.Admin {
		title = "Games"
	}
	return s.render(w, r, p, http.StatusOK, "games", title, d)
}
