package web

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/view"
)

type gameData struct {
	Game event.Game
	// WhiteName and BlackName are the sides as people read them.
	WhiteName, BlackName string
	Disputes             []disputeRow
	// CanDispute: the asker is a team that played the game.
	CanDispute bool
	MaxMessage int
	// Opening is the turn the viewer opens at: the newest dispute's (the
	// turn it proposes, or the one last run again), else the game's end.
	Opening string
	// Logged: the event's log takes the game (its inclusion proof).
	Logged bool
}

func (s *Server) gamePage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, err := s.ownGame(r, p)
	if err != nil {
		return err
	}
	team := p.Team
	if p.Admin {
		team = 0
	}
	list, err := s.Store.Disputes(r.Context(), team, g.ID, false)
	if err != nil {
		return err
	}
	for i := range list {
		list[i] = disputeSeenBy(p, g, list[i])
	}
	names, err := s.Store.Names(r.Context())
	if err != nil {
		return err
	}
	d := gameData{Game: g, WhiteName: names.Of(g.White), BlackName: names.Of(g.Black),
		CanDispute: !p.Admin && g.Involves(p.Team), MaxMessage: event.MaxDisputeMessage, Logged: s.logged(g)}
	if d.Disputes, err = s.disputeRows(r, list); err != nil {
		return err
	}
	d.Opening = "last"
	if len(list) > 0 && list[0].RerunPly > 0 {
		d.Opening = strconv.Itoa(list[0].RerunPly)
	}
	return s.render(w, r, p, http.StatusOK, "game", fmt.Sprintf("Game %d", g.ID), d)
}

var (
	inlineBlock = regexp.MustCompile(`(?s)<(script|style)>(.*?)</(?:script|style)>`)
	anyScript   = regexp.MustCompile(`(?is)<script\b.*?</script>`)
	styleAttr   = regexp.MustCompile(`\sstyle="([^"]*)"`)
)

// gameView is the game's viewer page, as arena view writes it: its own
// script and style (its style attributes too) are allowed by their hashes,
// nothing else runs.
func (s *Server) gameView(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, err := s.ownGame(r, p)
	if err != nil {
		return err
	}
	d, err := view.Build(filepath.Join(s.Store.MatchDir(g), transcript.FileName))
	if err != nil {
		return err
	}
	// The header names the teams as people read them, each bot's own name
	// beside it: "C++ Wizards (C-Wizards)".
	names, err := s.Store.Names(r.Context())
	if err != nil {
		return err
	}
	d.White, d.Black = withBot(names.Of(g.White), d.White), withBot(names.Of(g.Black), d.Black)
	if keep, redact := ownSide(p, g); redact {
		d.Redact(keep)
	}
	return s.viewer(w, d)
}

// viewer answers the viewer's page of d: its own script and style (its
// style attributes too) are allowed by their hashes, nothing else runs; a
// live page may read its stream, from this site only.
func (s *Server) viewer(w http.ResponseWriter, d *view.Data) error {
	page, err := view.HTML(d)
	if err != nil {
		return err
	}
	var scripts, styles []string
	for _, m := range inlineBlock.FindAllSubmatch(page, -1) {
		sum := sha256.Sum256(m[2])
		h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if string(m[1]) == "script" {
			scripts = append(scripts, h)
		} else {
			styles = append(styles, h)
		}
	}
	// The markup's style attributes, outside the scripts and the data.
	attrs := map[string]bool{}
	for _, m := range styleAttr.FindAllSubmatch(anyScript.ReplaceAll(page, nil), -1) {
		sum := sha256.Sum256([]byte(html.UnescapeString(string(m[1]))))
		if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !attrs[h] {
			attrs[h] = true
			if len(attrs) == 1 {
				styles = append(styles, "'unsafe-hashes'")
			}
			styles = append(styles, h)
		}
	}
	connect := ""
	if d.Live != "" {
		connect = "; connect-src 'self'"
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src "+strings.Join(scripts, " ")+"; style-src "+
		strings.Join(styles, " ")+"; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"+connect)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err = w.Write(page)
	return err
}

// withBot is a team's name with its bot's beside it, when they differ.
func withBot(team, bot string) string {
	if team == "" || team == bot {
		return bot
	}
	return team + " (" + bot + ")"
}

// ownSide says which side of game g is the asker's, and whether the other
// side's own output must be left out of what the asker gets: games are
// shared, logs are private. The organizer gets everything; so does a team
// playing a built-in bot, which has nothing of its own to keep.
func ownSide(p *event.Principal, g event.Game) (keep string, redact bool) {
	return sideOf(p, g.White.Team, g.Black.Team)
}

// disputeSeenBy is dispute d of game g as p may see it, by ownSide's rule:
// a rerun of the other side's turn without what its bot printed.
func disputeSeenBy(p *event.Principal, g event.Game, d event.Dispute) event.Dispute {
	keep, redact := ownSide(p, g)
	return d.SeenBy(keep, redact)
}

// sideOf is ownSide for a game between the teams white and black (0: a
// built-in bot), asked by p (nil: a visitor, who keeps neither side's).
func sideOf(p *event.Principal, white, black int64) (keep string, redact bool) {
	switch {
	case p == nil:
		return "", true
	case p.Admin:
		return "", false
	case p.Team == 0:
		return "", true
	case white == p.Team && black == p.Team:
		return "", false
	case white == p.Team:
		return transcript.WinnerWhite, black != 0
	case black == p.Team:
		return transcript.WinnerBlack, white != 0
	}
	return "", true
}
