package web

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
)

// gameRow is a game as a list shows it to a team (Me its colour, Rival the
// other side's name) or to the organizer (both sides' names). Its fields
// are the game's, flat: a list draws thousands of them, and a template
// reads an embedded struct's fields slowly.
type gameRow struct {
	ID           int64
	Kind         string
	Rated        bool
	Reason       string
	Turns, Plies int
	Length       string
	Finished     time.Time
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
		row := gameRow{ID: g.ID, Kind: g.Kind, Rated: g.Rated, Reason: g.Reason, Turns: g.Turns, Plies: g.Plies, Length: g.Length(),
			Finished: g.Finished, WhiteName: names.Of(g.White), BlackName: names.Of(g.Black)}
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
	// Table is the page's games, drawn.
	Table template.HTML
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

// tableCache keeps the games tables a list page drew, by all that decides
// one: who asks, the filters and the page, how many times the team's games
// changed and the teams' names' version; and each row drawn, by its game
// (its id and when it was recorded), the side it is seen from, whether it
// is rated and the names' version. A team's list drawn again reads no game
// and renders nothing; a list whose games moved down a page draws only
// its new rows.
type tableCache struct {
	mu     sync.Mutex
	tables map[string]template.HTML
	rows   map[string]template.HTML
}

// The tables and the rows kept at most (about 12 KiB a table, half a KiB a
// row): past either bound, all of that kind are dropped.
const (
	tableCacheSize = 2000
	rowCacheSize   = 50000
)

// gameTable is a games table's rows, drawn, and whether they are seen
// from a team's side (Mine) or the organizer's.
type gameTable struct {
	Mine bool
	Rows []template.HTML
}

// drawGames draws rows (their names read at namesVersion) as the games
// table of a page.
func (s *Server) drawGames(rows []gameRow, namesVersion int64) (template.HTML, error) {
	t := gameTable{Mine: len(rows) > 0 && rows[0].Me != ""}
	for _, r := range rows {
		key := fmt.Sprintf("%d/%d/%s/%d/%t/%d", r.ID, r.Finished.UnixNano(), r.Me, r.MySubmission, r.Rated, namesVersion)
		s.tables.mu.Lock()
		html, ok := s.tables.rows[key]
		s.tables.mu.Unlock()
		if !ok {
			row, err := fragment("games", "game-row", r)
			if err != nil {
				return "", err
			}
			html = template.HTML(row) // the template escaped every value
			s.tables.mu.Lock()
			if s.tables.rows == nil || len(s.tables.rows) >= rowCacheSize {
				s.tables.rows = map[string]template.HTML{}
			}
			s.tables.rows[key] = html
			s.tables.mu.Unlock()
		}
		t.Rows = append(t.Rows, html)
	}
	table, err := fragment("games", "games", t)
	return template.HTML(table), err
}

// gamesTable is the games q picks, drawn as asker sees them, and how many
// it picks in all; a team's list comes from the cache while its games
// and the names are as they were.
func (s *Server) gamesTable(ctx context.Context, asker int64, names event.TeamNames, q event.GameQuery) (template.HTML, int, error) {
	var key string
	if q.Team != 0 {
		n, changes, err := s.Store.TeamGames(ctx, q.Team, q.Kind)
		if err != nil {
			return "", 0, err
		}
		key = fmt.Sprintf("%d/%d/%s/%d/%d/%d/%d", asker, q.Team, q.Kind, q.Offset, q.Limit, changes, names.Version)
		s.tables.mu.Lock()
		table, ok := s.tables.tables[key]
		s.tables.mu.Unlock()
		if ok {
			return table, int(n), nil
		}
	}
	games, total, err := s.Store.ListGames(ctx, q)
	if err != nil {
		return "", 0, err
	}
	table, err := s.drawGames(gameRows(games, asker, names), names.Version)
	if err != nil {
		return "", 0, err
	}
	if key != "" {
		s.tables.mu.Lock()
		if s.tables.tables == nil || len(s.tables.tables) >= tableCacheSize {
			s.tables.tables = map[string]template.HTML{}
		}
		s.tables.tables[key] = table
		s.tables.mu.Unlock()
	}
	return table, total, nil
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
	d.Table, d.Total, err = s.gamesTable(r.Context(), asker, names, event.GameQuery{Team: d.Team, Kind: d.Kind,
		Offset: (d.Page - 1) * gamesPerPage, Limit: gamesPerPage})
	if err != nil {
		return err
	}
	d.Pages = max(1, (d.Total+gamesPerPage-1)/gamesPerPage)
	if shown := min(gamesPerPage, d.Total-(d.Page-1)*gamesPerPage); shown > 0 {
		d.First, d.Last = (d.Page-1)*gamesPerPage+1, (d.Page-1)*gamesPerPage+shown
	}
	title := "Your games"
	if p.Admin {
		title = "Games"
	}
	return s.render(w, r, p, http.StatusOK, "games", title, d)
}
