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
	// organizer); TeamOptions the teams the organizer may pick, drawn as
	// the options of a list, Team's picked.
	Team        int64
	TeamOptions template.HTML
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

// teamOptions are the organizer's list of teams drawn, and the names'
// version and the team picked they were drawn at.
type teamOptions struct {
	mu      sync.Mutex
	version int64
	picked  int64
	html    template.HTML
}

// listCache keeps a team's lists of games as a page or the API wrote
// them, by all that decides one: what wrote it, who asks, the filters and
// the page, how many times the team's games changed and the teams' names'
// version. A team's list asked again reads no game and writes nothing.
//
// It keeps two generations: the lists kept lately, and those kept before
// them. When the lists kept lately pass listCacheBytes, they become the
// older ones and the older ones go; a list asked for again moves to the
// recent. So the lists asked for go on being kept, a list no one asks for
// again (of an earlier count of games) goes within two generations, and
// the cache holds at most twice listCacheBytes.
type listCache struct {
	mu            sync.Mutex
	recent, older map[string]string
	bytes         int // of the recent lists
}

// listCacheBytes is how much a generation of kept lists holds: about 4
// KiB a team page's table, 10 KiB a games page's, 45 KiB a page of the
// API's.
const listCacheBytes = 32 << 20

// get is the list kept under key ("": none).
func (c *listCache) get(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if list, ok := c.recent[key]; ok {
		return list
	}
	list, ok := c.older[key]
	if ok {
		c.putLocked(key, list)
	}
	return list
}

// put keeps list under key.
func (c *listCache) put(key, list string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, list)
}

func (c *listCache) putLocked(key, list string) {
	if c.recent == nil || c.bytes >= listCacheBytes {
		c.older, c.recent, c.bytes = c.recent, map[string]string{}, 0
	}
	c.recent[key] = list
	c.bytes += len(key) + len(list)
}

// teamList is what a list of q's games is kept under in the cache ("" when
// it is not kept: the organizer's list of every team's games), what is
// kept there if anything, and how many games q picks in all (from the
// team's count when it is a team's list). what names the writer.
func (s *Server) teamList(ctx context.Context, what string, asker int64, names event.TeamNames, q event.GameQuery) (key, kept string, total int, err error) {
	if q.Team == 0 {
		return "", "", 0, nil
	}
	n, changes, err := s.Store.TeamGames(ctx, q.Team, q.Kind)
	if err != nil {
		return "", "", 0, err
	}
	key = fmt.Sprintf("%s/%d/%d/%s/%d/%d/%d/%d", what, asker, q.Team, q.Kind, q.Offset, q.Limit, changes, names.Version)
	return key, s.lists.get(key), int(n), nil
}

// listGames is q's page of games and their count: a team's count
// (teamList's key and total) is not read again.
func (s *Server) listGames(ctx context.Context, key string, total int, q event.GameQuery) ([]event.Game, int, error) {
	if key == "" {
		return s.Store.ListGames(ctx, q)
	}
	games, err := s.Store.GamesPage(ctx, q)
	return games, total, err
}

// keepList keeps list under key (nothing if key is "").
func (s *Server) keepList(key, list string) {
	if key != "" {
		s.lists.put(key, list)
	}
}

// gameTable is a games table's rows, and whether they are seen from a
// team's side (Mine) or the organizer's.
type gameTable struct {
	Mine bool
	Rows []gameRow
}

// drawGames draws rows as the games table of a page (the template
// "games", a row each by "game-row").
func drawGames(rows []gameRow) (template.HTML, error) {
	return drawn("games", "games", gameTable{Mine: len(rows) > 0 && rows[0].Me != "", Rows: rows})
}

// Unrated says whether the row marks its game as not rated: a ladder game
// that did not count.
func (r gameRow) Unrated() bool { return r.Kind == event.LadderGame && !r.Rated }

// Proof says whether the row links its game's inclusion proof: a game of
// the final, seen from a team's side.
func (r gameRow) Proof() bool { return r.Kind == event.FinalGame && r.Me != "" }

// Count is what the row's Turns column says: the game's turns, or, for a
// game kept before turns were counted, its plies, named so (one that
// played none says 0).
func (r gameRow) Count() string {
	if r.Turns == 0 && r.Plies != 0 {
		return strconv.Itoa(r.Plies) + " plies"
	}
	return strconv.Itoa(r.Turns)
}

// gamesTable is the games q picks, drawn as asker sees them, and how many
// it picks in all; a team's list comes from the cache while its games
// and the names are as they were.
func (s *Server) gamesTable(ctx context.Context, asker int64, names event.TeamNames, q event.GameQuery) (template.HTML, int, error) {
	key, kept, total, err := s.teamList(ctx, "table", asker, names, q)
	if err != nil || kept != "" {
		return executed(kept), total, err // drawn by drawGames
	}
	games, total, err := s.listGames(ctx, key, total, q)
	if err != nil {
		return "", 0, err
	}
	table, err := drawGames(gameRows(games, asker, names))
	if err != nil {
		return "", 0, err
	}
	s.keepList(key, string(table))
	return table, total, nil
}

// teamOption is a team as the organizer's list of teams offers it.
type teamOption struct {
	ID   int64
	Name string
}

// teamOptionsData is the organizer's list of teams, Picked's picked.
type teamOptionsData struct {
	Teams  []teamOption
	Picked int64
}

// teamOptions are the options of the organizer's list of teams, one a
// team, team's picked (the template "team-options"): drawn again only when
// the names or the team picked change, since an event has a thousand
// teams and the organizer pages through one team's games.
func (s *Server) teamOptions(names event.TeamNames, team int64) (template.HTML, error) {
	s.options.mu.Lock()
	defer s.options.mu.Unlock()
	if s.options.html != "" && s.options.version == names.Version && s.options.picked == team {
		return s.options.html, nil
	}
	d := teamOptionsData{Teams: make([]teamOption, len(names.Order)), Picked: team}
	for i, id := range names.Order {
		d.Teams[i] = teamOption{ID: id, Name: names.ByID[id]}
	}
	html, err := drawn("games", "team-options", d)
	if err != nil {
		return "", err
	}
	s.options.version, s.options.picked, s.options.html = names.Version, team, html
	return html, nil
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
		if d.TeamOptions, err = s.teamOptions(names, d.Team); err != nil {
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
