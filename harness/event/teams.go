package event

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arenabots/arena/harness/submission"
)

// Team is one team of the event. Name is what people read, the team's own
// words (the organizer may change it); BotName is the name its bot plays
// under wherever a file or a directory needs one (tournaments, transcripts),
// given once when the team is made, unique in the event and never changed.
type Team struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	BotName  string    `json:"botName"`
	Members  string    `json:"members,omitempty"`
	Contact  string    `json:"contact,omitempty"`
	Disabled bool      `json:"disabled"`
	Created  time.Time `json:"created"`
}

// NewTeam is a team just added and its token, shown once.
type NewTeam struct {
	Team
	Token string
	// Collided names the team whose bot name this team's name reduces to:
	// its bot name was made unique with a number.
	Collided string
}

// CheckTeamName refuses a name that would be confusing on a page or in a
// file listing: empty, too long, not UTF-8, or with control characters.
func CheckTeamName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("a team needs a name")
	case len(name) > 100:
		return fmt.Errorf("team name %.20q... is longer than 100 bytes", name)
	case !utf8.ValidString(name):
		return fmt.Errorf("team name %q is not UTF-8", name)
	case strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return fmt.Errorf("team name %q has a control character", name)
	}
	return nil
}

var unsafeBotName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// botNameBase is a team's name reduced to a bot name
// (submission.CheckBotName): "team-ID" when nothing usable is left.
func botNameBase(team string, id int64) string {
	n := strings.Trim(unsafeBotName.ReplaceAllString(team, "-"), "-._")
	if len(n) > 48 {
		n = strings.TrimRight(n[:48], "-._")
	}
	if submission.CheckBotName(n) != nil {
		n = fmt.Sprintf("team-%d", id)
	}
	return n
}

// execer is a transaction or the store's writer.
type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// assignBotName gives team id (named name) its bot name: its name reduced,
// with -2, -3... when another team (of any case) has that one already. It
// returns the name and the team that holds the plain one, if any.
func assignBotName(ctx context.Context, q execer, id int64, name string) (bot, collided string, err error) {
	base := botNameBase(name, id)
	for n := 1; ; n++ {
		bot = base
		if n > 1 {
			bot = fmt.Sprintf("%s-%d", base, n)
		}
		var holder string
		err := q.QueryRowContext(ctx, `SELECT name FROM teams WHERE lower(bot_name) = lower(?) AND id != ?`, bot, id).Scan(&holder)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return "", "", err
		}
		if n == 1 {
			collided = holder
		}
	}
	_, err = q.ExecContext(ctx, `UPDATE teams SET bot_name = ? WHERE id = ?`, bot, id)
	return bot, collided, err
}

// AddTeam adds a team, gives it its bot name and returns its token.
func (s *Store) AddTeam(ctx context.Context, name, members, contact string) (NewTeam, error) {
	name = strings.TrimSpace(name)
	if err := CheckTeamName(name); err != nil {
		return NewTeam{}, err
	}
	token := NewToken()
	t := NewTeam{Team: Team{Name: name, Members: members, Contact: contact, Created: time.Now().UTC()}, Token: token}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return NewTeam{}, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO teams (name, members, contact, token_hash, created) VALUES (?, ?, ?, ?, ?)`,
		name, members, contact, HashToken(token), t.Created.Format(time.RFC3339Nano))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return NewTeam{}, fmt.Errorf("a team named %q exists", name)
		}
		return NewTeam{}, err
	}
	if t.ID, err = res.LastInsertId(); err != nil {
		return NewTeam{}, err
	}
	if t.BotName, t.Collided, err = assignBotName(ctx, tx, t.ID, name); err != nil {
		return NewTeam{}, err
	}
	return t, tx.Commit()
}

// giveBotNames gives every team made before bot names were kept its own, in
// the order the teams were made (in the migration's transaction).
func giveBotNames(ctx context.Context, tx querier) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, name FROM teams WHERE bot_name IS NULL ORDER BY id`)
	if err != nil {
		return err
	}
	type team struct {
		id   int64
		name string
	}
	todo, err := scanRows(rows, func(row interface{ Scan(...any) error }) (t team, err error) {
		err = row.Scan(&t.id, &t.name)
		return t, err
	})
	if err != nil {
		return err
	}
	for _, t := range todo {
		if _, _, err := assignBotName(ctx, tx, t.id, t.name); err != nil {
			return err
		}
	}
	return nil
}

// ImportTeams adds the teams of a CSV file (name, then optional members and
// contact; a first row "name,..." is a header). Teams that exist are
// skipped and listed in existing; a bad row stops the import with its line,
// after the rows before it were added.
func (s *Store) ImportTeams(ctx context.Context, r io.Reader) (added []NewTeam, existing []string, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return added, existing, nil
		}
		if err != nil {
			return added, existing, err
		}
		if len(rec) == 0 || (line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "name")) {
			continue
		}
		if len(rec) > 3 {
			return added, existing, fmt.Errorf("line %d: want name, members, contact; got %d fields", line, len(rec))
		}
		rec = append(rec, "", "")
		if _, err := s.TeamByName(ctx, strings.TrimSpace(rec[0])); err == nil {
			existing = append(existing, strings.TrimSpace(rec[0]))
			continue
		}
		t, err := s.AddTeam(ctx, rec[0], strings.TrimSpace(rec[1]), strings.TrimSpace(rec[2]))
		if err != nil {
			return added, existing, fmt.Errorf("line %d: %w", line, err)
		}
		added = append(added, t)
	}
}

// ErrNotFound is a team, submission, game or session that is not there.
var ErrNotFound = errors.New("not found")

const teamColumns = `id, name, bot_name, members, contact, disabled, created`

func scanTeam(row interface{ Scan(...any) error }) (Team, error) {
	var t Team
	var created string
	err := row.Scan(&t.ID, &t.Name, &t.BotName, &t.Members, &t.Contact, &t.Disabled, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	t.Created = parseTime(created)
	return t, err
}

// Team is the team with that id.
func (s *Store) Team(ctx context.Context, id int64) (Team, error) {
	return scanTeam(s.readRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = ?`, id))
}

// TeamByName is the team of that name.
func (s *Store) TeamByName(ctx context.Context, name string) (Team, error) {
	return scanTeam(s.readRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE name = ?`, name))
}

// Teams lists every team by name.
func (s *Store) Teams(ctx context.Context) ([]Team, error) {
	return readAll(ctx, s, scanTeam, `SELECT `+teamColumns+` FROM teams ORDER BY name`)
}

// TeamsPage is a page of the teams, by name, whose name holds find (ASCII
// letters in either case; "": every team), and how many teams match in
// all.
func (s *Store) TeamsPage(ctx context.Context, find string, offset, limit int) ([]Team, int, error) {
	like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(find) + "%"
	var total int
	if err := s.readRow(ctx, `SELECT count(*) FROM teams WHERE name LIKE ? ESCAPE '\'`, like).Scan(&total); err != nil {
		return nil, 0, err
	}
	teams, err := readAll(ctx, s, scanTeam, `SELECT `+teamColumns+` FROM teams WHERE name LIKE ? ESCAPE '\' ORDER BY name LIMIT ? OFFSET ?`, like, limit, offset)
	return teams, total, err
}

// TeamNames are the teams' names by id, and by bot name: what a page shows
// for a side of a game or a row of standings.
type TeamNames struct {
	ByID  map[int64]string
	ByBot map[string]string
	// Order is every team's id, in Teams' order.
	Order []int64
	// Version counts the changes of the teams' names when these were read.
	Version int64
}

// Names are every team's name. A page asks for them on every request: they
// are read again only when a team was added, renamed or removed since
// (teams_version says so, whichever process changed them). The maps are
// shared: a caller must not change them.
func (s *Store) Names(ctx context.Context) (TeamNames, error) {
	var version int64
	if err := s.readRow(ctx, `SELECT n FROM teams_version WHERE id = 1`).Scan(&version); err != nil {
		return TeamNames{}, err
	}
	s.namesMu.Lock()
	cached := s.names
	s.namesMu.Unlock()
	if cached != nil && cached.version == version {
		return cached.names, nil
	}
	teams, err := s.Teams(ctx)
	if err != nil {
		return TeamNames{}, err
	}
	n := TeamNames{ByID: map[int64]string{}, ByBot: map[string]string{}, Version: version}
	for _, t := range teams {
		n.ByID[t.ID], n.ByBot[t.BotName] = t.Name, t.Name
		n.Order = append(n.Order, t.ID)
	}
	// Read after the version: a change in between reads again next time.
	s.namesMu.Lock()
	s.names = &versionedNames{version, n}
	s.namesMu.Unlock()
	return n, nil
}

// Of is the name of a side of a game: its team's, or the name it played
// under for a built-in bot.
func (n TeamNames) Of(side Side) string {
	if name, ok := n.ByID[side.Team]; ok && side.Team != 0 {
		return name
	}
	return side.Name
}

// Rename gives a team another name, the one people read; its bot name, and
// so every game and tournament it played, stay as they are.
func (s *Store) Rename(ctx context.Context, team int64, name string) (Team, error) {
	name = strings.TrimSpace(name)
	if err := CheckTeamName(name); err != nil {
		return Team{}, &RefusedError{err.Error()}
	}
	before, err := s.Team(ctx, team)
	if err != nil {
		return Team{}, err
	}
	if before.Name == name {
		return before, nil
	}
	err = s.act(ctx, ActionRename, func(tx *sql.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE teams SET name = ? WHERE id = ?`, name, team); err != nil {
			if strings.Contains(err.Error(), "UNIQUE") {
				return "", &RefusedError{fmt.Sprintf("another team is named %q", name)}
			}
			return "", err
		}
		return fmt.Sprintf("%q is now %q (it plays as %s still)", before.Name, name, before.BotName), nil
	})
	if err != nil {
		return Team{}, err
	}
	return s.Team(ctx, team)
}

// NewTeamToken gives a team a new token; the old one, and every session
// opened with it, stop working at once.
func (s *Store) NewTeamToken(ctx context.Context, team int64) (string, error) {
	token := NewToken()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE teams SET token_hash = ? WHERE id = ?`, HashToken(token), team)
	if err != nil {
		return "", err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", ErrNotFound
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE team_id = ?`, team); err != nil {
		return "", err
	}
	return token, tx.Commit()
}

// SetDisabled disables or enables a team; a disabled team's sessions end.
func (s *Store) SetDisabled(ctx context.Context, team int64, disabled bool) error {
	action := ActionEnable
	if disabled {
		action = ActionDisable
	}
	return s.act(ctx, action, func(tx *sql.Tx) (string, error) {
		if disabled {
			var name, started string
			err := tx.QueryRowContext(ctx, `SELECT t.name, r.started FROM final_players p JOIN teams t ON t.id = p.team
				JOIN final_run r ON r.id = 1 AND r.finished = '' WHERE p.team = ?`, team).Scan(&name, &started)
			if err == nil {
				return "", &RefusedError{fmt.Sprintf("%s plays the final, which runs (started %s): disabling it would not take it out of the final, whose schedule holds its games; disable it once the final has ended",
					name, parseTime(started).Format("2006-01-02 15:04 MST"))}
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return "", err
			}
		}
		var name string
		if err := tx.QueryRowContext(ctx, `UPDATE teams SET disabled = ? WHERE id = ? RETURNING name`, disabled, team).Scan(&name); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return "", ErrNotFound
			}
			return "", err
		}
		if disabled {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE team_id = ?`, team); err != nil {
				return "", err
			}
		}
		return name, nil
	})
}

// Team is the name of team id; 0 is the built-in random bot.
func (n TeamNames) Team(id int64) string {
	if id == 0 {
		return "the built-in random bot"
	}
	return n.ByID[id]
}
