package tournament

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/words"
)

// Output files in the tournament directory.
const (
	StandingsJSON = "standings.json"
	StandingsCSV  = "standings.csv"
	CrosstableTxt = "crosstable.txt"
	ReportHTML    = "report.html"
)

// State is a tournament as read from its database.
type State struct {
	Config  Config
	Games   []Record
	Summary Summary
	// Suspensions are the workers shut out for a result they handed in
	// that was refused (the tournament's workers directory).
	Suspensions []roster.Suspension `json:"suspensions,omitempty"`
	// Workers are the machines that played games for a coordinator, in name
	// order ("" for the coordinator's own machine is left out).
	Workers []WorkerRow
	// Pairs are the pairs of games of each two bots.
	Pairs []PairRow
}

// WorkerRow is one worker's share of a tournament.
type WorkerRow struct {
	Name  string `json:"name"`
	Games int    `json:"games"`
	// TurnMs is the median over its games of each game's median turn.
	TurnMs  float64 `json:"turnMs"`
	Machine Machine `json:"machine"`
}

// workerRows counts each worker's games and their turn times.
func workerRows(recs []Record, machines map[string]Machine) []WorkerRow {
	turns := map[string][]float64{}
	for _, r := range recs {
		if r.Status == Done && r.Worker != "" {
			turns[r.Worker] = append(turns[r.Worker], r.TurnMs)
		}
	}
	for name := range machines {
		if _, ok := turns[name]; !ok {
			turns[name] = nil
		}
	}
	var out []WorkerRow
	for name, ts := range turns {
		out = append(out, WorkerRow{Name: name, Games: len(ts), TurnMs: stats.Median(ts), Machine: machines[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrNotStarted is what Load returns (wrapped) for a directory whose
// tournament has not stored its configuration yet: no database, or one a
// runner is creating this very moment.
var ErrNotStarted = errors.New("the tournament has not started")

// notStarted says why, in words, and is ErrNotStarted.
type notStarted string

func (e notStarted) Error() string      { return string(e) }
func (notStarted) Is(target error) bool { return target == ErrNotStarted }

// Load reads a tournament (finished or running) and computes its standings.
func Load(ctx context.Context, dir string) (*State, error) {
	if _, err := os.Stat(filepath.Join(dir, DBFile)); err != nil {
		return nil, notStarted(fmt.Sprintf("%s holds no tournament (%s not found)", dir, DBFile))
	}
	st, err := OpenStore(dir, true)
	if err != nil {
		return nil, err
	}
	defer st.Close() // read-only: nothing to lose if closing fails
	if ok, err := st.Initialized(ctx); err != nil || !ok {
		if err == nil {
			err = notStarted(dir + ": the tournament has no configuration yet")
		}
		return nil, err
	}
	cfg, err := st.Config(ctx)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, notStarted(dir + ": the tournament has no configuration yet")
	}
	recs, err := st.Games(ctx)
	if err != nil {
		return nil, err
	}
	machines, err := st.Machines(ctx)
	if err != nil {
		return nil, err
	}
	suspended, err := roster.SuspensionList(WorkersDir(dir))
	if err != nil {
		return nil, err
	}
	s := &State{Config: *cfg, Games: recs, Workers: workerRows(recs, machines), Suspensions: suspended}
	s.Summary.Total, s.Summary.TieBreaks = len(recs), cfg.TieBreaks
	var bot, game float64
	for _, r := range recs {
		switch r.Status {
		case Done:
			s.Summary.Done++
			bot += r.BotMs
			game += r.DurationMs
		case Unplayed:
			s.Summary.Unplayed++
		default:
			s.Summary.Pending++
		}
	}
	if more := cfg.unpaired(recs); more > 0 {
		s.Summary.Pending += more
		s.Summary.Total += more
	}
	s.Summary.BotTime = time.Duration(bot * float64(time.Millisecond))
	s.Summary.GameTime = time.Duration(game * float64(time.Millisecond))
	s.Summary.Standings = cfg.Standings(recs, recs)
	for i, r := range s.Summary.Standings {
		for _, b := range cfg.Bots {
			if b.Name == r.Name {
				s.Summary.Standings[i].Team = b.Team
			}
		}
	}
	s.Pairs = pairRows(cfg.Bots, recs)
	return s, nil
}

// StandingsOf is the standings computed from the finished games keep
// admits (a scoreboard frozen at a time shows the games finished by then).
func (s *State) StandingsOf(keep func(Record) bool) []Row {
	var recs []Record
	for _, r := range s.Games {
		if r.Status == Done && keep(r) {
			recs = append(recs, r)
		}
	}
	return s.Config.Standings(recs, s.Games)
}

// StandingsFile is standings.json.
type StandingsFile struct {
	Format    string   `json:"format"`
	Game      string   `json:"game"`
	Seed      uint64   `json:"seed"`
	Scoring   Scoring  `json:"scoring"`
	TieBreaks []string `json:"tieBreaks"`
	// Games counts the games: total, done, unplayed, pending.
	Games     map[string]int `json:"games"`
	Standings []Row          `json:"standings"`
	// Pairs are each two bots' pairs of games; SidesBalanced says whether
	// every bot had the first move as often as each opponent (within one).
	Pairs         []PairRow `json:"pairs"`
	SidesBalanced bool      `json:"sidesBalanced"`
}

// StandingsFile is the content of standings.json.
func (s *State) StandingsFile() StandingsFile {
	balanced, _ := SidesBalanced(s.Pairs)
	return StandingsFile{
		Format: s.Config.Format, Game: s.Config.Game, Seed: s.Config.Seed, Scoring: s.Config.Scoring, TieBreaks: s.Config.TieBreaks,
		Games:     map[string]int{"total": s.Summary.Total, "done": s.Summary.Done, "unplayed": s.Summary.Unplayed, "pending": s.Summary.Pending},
		Standings: s.Summary.Standings, Pairs: s.Pairs, SidesBalanced: balanced,
	}
}

// StandingsJSON is standings.json as written: indented by two spaces, with a
// final newline.
func (s *State) StandingsJSON() ([]byte, error) {
	j, err := json.MarshalIndent(s.StandingsFile(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(j, '\n'), nil
}

// Report loads the tournament and writes standings.json, standings.csv,
// crosstable.txt and report.html into its directory.
func Report(ctx context.Context, dir string) (*Summary, error) {
	s, err := Load(ctx, dir)
	if err != nil {
		return nil, err
	}
	standings, err := s.StandingsJSON()
	if err != nil {
		return nil, err
	}
	csv, err := s.CSV()
	if err != nil {
		return nil, err
	}
	files := []struct {
		name string
		data []byte
	}{
		{StandingsJSON, standings},
		{StandingsCSV, csv},
		{CrosstableTxt, []byte(s.Crosstable())},
		{ReportHTML, s.HTML()},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.name), f.data); err != nil {
			return nil, err
		}
	}
	return &s.Summary, nil
}

// writeFile replaces path with data in one step: a reader sees the old file or
// the new one, never a part.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp) // best effort: the write error is the one to report
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp) // best effort, as above
		return err
	}
	return nil
}

func opt(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', 6, 64)
}

// CSV renders the standings.
func (s *State) CSV() ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"rank", "bot", "games", "wins", "draws", "losses", "points", "sonneborn_berger", "direct_encounter", "random_draw", "elo", "elo_margin", "decided_by", "rank_low", "rank_high", "separated_from_next"})
	for _, r := range s.Summary.Standings {
		w.Write([]string{strconv.Itoa(r.Rank), r.Name, strconv.Itoa(r.Games), strconv.Itoa(r.Wins), strconv.Itoa(r.Draws), strconv.Itoa(r.Losses),
			strconv.FormatFloat(r.Points, 'g', -1, 64), strconv.FormatFloat(r.SB, 'g', -1, 64), opt(r.Direct), opt(r.Random),
			strconv.FormatFloat(r.Elo, 'f', 0, 64), strconv.FormatFloat(r.EloMargin, 'f', 0, 64), r.DecidedBy,
			strconv.Itoa(r.RankSet.Low), strconv.Itoa(r.RankSet.High), strconv.FormatBool(r.Separated)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// cell is the results of row's bot against col's bot, from row's side: 1 win,
// = draw, 0 loss, in schedule order.
func (s *State) cell(row, col int) string {
	var out []string
	for _, g := range s.Games {
		if g.Status != Done || !((g.White == row && g.Black == col) || (g.White == col && g.Black == row)) {
			continue
		}
		me := transcript.WinnerWhite
		if g.Black == row {
			me = transcript.WinnerBlack
		}
		switch g.Winner {
		case transcript.WinnerDraw:
			out = append(out, "=")
		case me:
			out = append(out, "1")
		default:
			out = append(out, "0")
		}
	}
	return strings.Join(out, "")
}

// Crosstable renders every pair's results in standings order. Every column
// is as wide as its widest entry, however many games a pair played.
func (s *State) Crosstable() string {
	rows := s.Summary.Standings
	cells := make([][]string, len(rows))
	nameWidth := 0
	colWidth := make([]int, len(rows))
	for j := range rows {
		colWidth[j] = max(3, len(strconv.Itoa(j+1)))
	}
	for i, r := range rows {
		nameWidth = max(nameWidth, utf8.RuneCountInString(r.Name))
		cells[i] = make([]string, len(rows))
		for j, c := range rows {
			v := "-"
			if i != j {
				if v = s.cell(r.Bot, c.Bot); v == "" {
					v = "."
				}
			}
			cells[i][j] = v
			colWidth[j] = max(colWidth[j], len(v))
		}
	}
	points := make([]string, len(rows))
	pointsWidth := len("POINTS")
	for i, r := range rows {
		points[i] = strconv.FormatFloat(r.Points, 'g', -1, 64)
		pointsWidth = max(pointsWidth, len(points[i]))
	}
	rankWidth := len(strconv.Itoa(len(rows)))
	var b strings.Builder
	fmt.Fprintf(&b, "results from the row's side: 1 win, = draw, 0 loss, in the order played\n\n%*s  %-*s", rankWidth, "", nameWidth, "")
	for j := range rows {
		fmt.Fprintf(&b, "  %*d", colWidth[j], j+1)
	}
	fmt.Fprintf(&b, "  %*s\n", pointsWidth, "POINTS")
	for i, r := range rows {
		fmt.Fprintf(&b, "%*d  %-*s", rankWidth, i+1, nameWidth, r.Name)
		for j := range rows {
			fmt.Fprintf(&b, "  %*s", colWidth[j], cells[i][j])
		}
		fmt.Fprintf(&b, "  %*s\n", pointsWidth, points[i])
	}
	return b.String()
}

// shortID is an image id as docker prints it.
func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// HTML renders report.html: standings, crosstable, every game with links to its
// transcript and viewer. It is one file with no outside references.
func (s *State) HTML() []byte {
	var b strings.Builder
	s.htmlHead(&b)
	s.htmlBracket(&b)
	s.htmlStandings(&b)
	s.htmlPairs(&b)
	s.htmlCrosstable(&b)
	s.htmlWorkers(&b)
	s.htmlGames(&b)
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

// htmlHead writes the report's head and its first line: the game, the
// format, the games played and unplayed, the scoring and the tie-breaks.
func (s *State) htmlHead(b *strings.Builder) {
	e := html.EscapeString
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>`)
	fmt.Fprintf(b, "%s tournament", e(s.Config.Game))
	b.WriteString(`</title><style>
body{font:14px/1.4 system-ui,"DejaVu Sans",sans-serif;margin:20px;color:#222}
table{border-collapse:collapse;margin:10px 0 24px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}
th{background:#263238;color:#fff}
td.num{text-align:right} tr:nth-child(even){background:#f5f5f5}
.bad{color:#c0392b;font-weight:600}
</style></head><body>`)
	fmt.Fprintf(b, "<h1>%s tournament</h1><p>%s, %s per pair, seed %d; %d of %d games played",
		e(s.Config.Game), e(s.Config.Format), words.Plural(s.Config.GamesPerPair, "game"), s.Config.Seed, s.Summary.Done, s.Summary.Total)
	if s.Summary.Unplayed > 0 {
		fmt.Fprintf(b, `, <span class="bad">%d unplayed</span> (aborted by the host or sandbox, not scored)`, s.Summary.Unplayed)
	}
	fmt.Fprintf(b, "; scoring %g/%g/%g; tie-breaks: %s.</p>", s.Config.Scoring.Win, s.Config.Scoring.Draw, s.Config.Scoring.Loss, e(strings.Join(s.Config.TieBreaks, ", ")))
}

// htmlBracket writes the bracket of a knockout, a double elimination or
// a stages tournament's second stage, and how its seeds were placed.
func (s *State) htmlBracket(b *strings.Builder) {
	if svg := s.BracketSVG(); svg != "" {
		seeded := "Seeds in the order the bots were given"
		if s.Config.Format == Stages {
			seeded = "Seeds by the qualifier's places"
		}
		fmt.Fprintf(b, `<h2>Bracket</h2><p>%s; each match %s (sides alternating), then up to %d single games while level, then the higher seed goes through.</p>%s`,
			seeded, words.Plural(s.Config.GamesPerPair, "game"), maxDeciders, svg)
	}
}

// htmlStandings writes the standings table with each bot's tie-breaks,
// Elo, likelihood of superiority and 95% ranks, and what they mean.
func (s *State) htmlStandings(b *strings.Builder) {
	e := html.EscapeString
	columns := TieBreakColumns(s.Config.TieBreaks)
	b.WriteString("<h2>Standings</h2><table><tr><th>#</th><th>Bot</th><th>Games</th><th>W</th><th>D</th><th>L</th><th>Points</th>")
	for _, c := range columns {
		fmt.Fprintf(b, "<th>%s</th>", e(TieBreakLabel(c)))
	}
	b.WriteString("<th>Elo (95%)</th><th>LOS over next</th><th>Draws</th><th>1st / 2nd player</th><th>Tie broken by</th><th>95% ranks</th></tr>")
	for i, r := range s.Summary.Standings {
		los := "&mdash;"
		if r.LOS != nil {
			los = fmt.Sprintf("%.1f%%", 100**r.LOS)
		}
		fmt.Fprintf(b, `<tr><td>%d</td><td>%s</td><td class="num">%d</td><td class="num">%d</td><td class="num">%d</td><td class="num">%d</td><td class="num">%g</td>`,
			r.Rank, e(r.Name), r.Games, r.Wins, r.Draws, r.Losses, r.Points)
		for _, c := range columns {
			fmt.Fprintf(b, `<td class="num">%g</td>`, r.TieBreak(c))
		}
		fmt.Fprintf(b, `<td>%s</td><td class="num">%s</td><td class="num">%.0f%%</td><td class="num">%d / %d</td><td>%s</td><td>%s</td></tr>`,
			e(FormatElo(r)), los, 100*r.DrawRatio, r.AsWhite, r.AsBlack, e(r.DecidedBy), e(FormatRanks(r, i == len(s.Summary.Standings)-1)))
	}
	b.WriteString("</table>")
	if len(s.Config.TieBreaks) > 0 {
		fmt.Fprintf(b, "<p>Bots level on points are placed by %s%s.</p>", e(TieBreakWords(s.Config.TieBreaks)), e(PlayoffWords(s.Config.PlayoffPlaces(), "bots")))
	}
	b.WriteString("<p>95% ranks: the places each bot's strength may hold given every game, at 95% confidence (a Bradley-Terry model fitted to all games, draws half a win, with simultaneous intervals of each bot's differences with every other); ~ marks a bot not told apart from the next one.</p>")
}

// htmlPairs writes whether sides were balanced and each pair's results.
func (s *State) htmlPairs(b *strings.Builder) {
	e := html.EscapeString
	b.WriteString("<h2>Pairs</h2>")
	if ok, why := SidesBalanced(s.Pairs); ok {
		b.WriteString("<p>Sides were balanced: every bot had the first move as often as each opponent (within one game), and each pair of games shared its seed and its opening, sides swapped.</p>")
	} else {
		fmt.Fprintf(b, `<p class="bad">Sides were not balanced: %s.</p>`, e(why))
	}
	b.WriteString("<table><tr><th>A</th><th>B</th><th>Pairs by A's points [0, ½, 1, 1½, 2]</th><th>Single games (deciders)</th><th>Incomplete</th><th>A first / B first</th></tr>")
	for _, p := range s.Pairs {
		fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td><td>%s</td><td class="num">%d</td><td class="num">%d</td><td class="num">%d / %d</td></tr>`,
			e(p.A), e(p.B), p.Pentanomial, p.Singles, p.Incomplete, p.AWhite, p.BWhite)
	}
	b.WriteString("</table>")
}

// htmlCrosstable writes each bot's results against each other.
func (s *State) htmlCrosstable(b *strings.Builder) {
	e := html.EscapeString
	b.WriteString("<h2>Crosstable</h2><table><tr><th></th><th>Bot</th>")
	rows := s.Summary.Standings
	for i := range rows {
		fmt.Fprintf(b, "<th>%d</th>", i+1)
	}
	b.WriteString("</tr>")
	for i, r := range rows {
		fmt.Fprintf(b, "<tr><td>%d</td><td>%s</td>", i+1, e(r.Name))
		for j, c := range rows {
			v := "&mdash;"
			if i != j {
				v = e(s.cell(r.Bot, c.Bot))
			}
			fmt.Fprintf(b, `<td class="num">%s</td>`, v)
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table><p>1 win, = draw, 0 loss, from the row's side, in the order played.</p>")
}

// htmlWorkers writes the workers that played the games and the
// machines they described, and the workers suspended, if any.
func (s *State) htmlWorkers(b *strings.Builder) {
	e := html.EscapeString
	if len(s.Workers) > 0 {
		b.WriteString("<h2>Workers</h2><table><tr><th>Worker</th><th>Games</th><th>Median turn</th><th>Host</th><th>CPUs</th><th>Sandbox</th><th>Image</th><th>Bench (p50)</th></tr>")
		for _, w := range s.Workers {
			var bench []string
			for _, f := range w.Machine.Bench {
				bench = append(bench, fmt.Sprintf("%s %.2f ms", f.Name, f.P50Ms))
			}
			fmt.Fprintf(b, `<tr><td>%s</td><td class="num">%d</td><td class="num">%.2f ms</td><td>%s</td><td class="num">%d</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
				e(w.Name), w.Games, w.TurnMs, e(w.Machine.Host), w.Machine.CPUs, e(w.Machine.Sandbox), e(shortID(w.Machine.ImageID)), e(strings.Join(bench, "; ")))
		}
		b.WriteString("</table><p>Each worker's machine as it described itself (host, CPUs, engine and bench figures are its own word); its sandbox is what its transcripts record; the median turn is the median over its games of each game's median turn.</p>")
	}
	if len(s.Suspensions) > 0 {
		b.WriteString("<h2>Suspended workers</h2><ul>")
		for _, su := range s.Suspensions {
			fmt.Fprintf(b, "<li>%s</li>", e(su.String()))
		}
		b.WriteString("</ul><p>A worker whose result was refused for what it claimed is shut out at once; the game went to another worker without spending its attempts. <code>arena workers readmit DIR NAME</code> lets one in again.</p>")
	}
}

// htmlGames writes every game: its sides, result and reason, faults,
// worker and links to its viewer and transcript once played.
func (s *State) htmlGames(b *strings.Builder) {
	e := html.EscapeString
	b.WriteString("<h2>Games</h2><table><tr><th>#</th><th>Round</th><th>White</th><th>Black</th><th>Result</th><th>Reason</th><th>Plies</th><th>Faults</th><th>Worker</th><th>Record</th></tr>")
	for _, g := range s.Games {
		result, reason := g.Status, ""
		switch g.Status {
		case Done:
			result, reason = g.Winner, g.Reason
		case Unplayed:
			reason = fmt.Sprintf("aborted %s here: %s", words.Plural(g.Attempts, "time"), g.AbortReason)
			if hosts := slices.DeleteFunc(slices.Clone(g.AbortedBy), func(h string) bool { return h == "" }); len(hosts) > 0 {
				reason = fmt.Sprintf("aborted on %s: %s", strings.Join(hosts, ", "), g.AbortReason)
			}
		}
		if g.Rejected > 0 {
			reason += fmt.Sprintf(" (%s from suspended workers refused)", words.Plural(g.Rejected, "result"))
		}
		var faults []string
		for _, f := range g.Faults {
			faults = append(faults, fmt.Sprintf("ply %d %s %s", f.Ply, f.Side, f.Verdict))
		}
		links := ""
		if g.Status == Done && g.Dir != "" {
			d := filepath.ToSlash(g.Dir)
			links = fmt.Sprintf(`<a href="%s/%s">view</a> · <a href="%s/%s">transcript</a>`, e(d), ViewHTML, e(d), transcript.FileName)
		}
		cls := ""
		if g.Status == Unplayed || len(g.Faults) > 0 {
			cls = ` class="bad"`
		}
		round := strconv.Itoa(g.Round)
		if g.Playoff > 0 {
			round += ", playoff"
		}
		fmt.Fprintf(b, "<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td%s>%s</td><td>%s</td><td class=\"num\">%d</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			g.ID, round, e(s.Config.Bots[g.White].Name), e(s.Config.Bots[g.Black].Name), cls, e(result), e(reason), g.Plies, e(strings.Join(faults, "; ")), e(g.Worker), links)
	}
	b.WriteString("</table>")
}
