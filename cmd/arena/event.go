//go:build !team

package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/words"
)

// flagNamed is the flag called name among flags: the definition of the
// commands that own it, shared.
func flagNamed(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	panic("arena: no flag --" + name)
}

func notAnEvent(dir string) error {
	return usagef("%s is not an event: it has no %s (arena event init %s --game G makes one)", dir, event.ConfigFile, dir)
}

// openEvent opens the store of the event in dir, after checking its
// event.toml: a directory that is not a valid event is refused.
func openEvent(dir string) (*event.Store, error) {
	_, err := event.LoadConfig(dir)
	var bad *event.ConfigError
	switch {
	case errors.As(err, &bad):
		return nil, err
	case errors.Is(err, fs.ErrNotExist):
		return nil, notAnEvent(dir)
	case err != nil:
		return nil, err
	}
	return event.Open(dir)
}

// withEvent runs f on the store of the event in dir and closes it.
func withEvent(dir string, f func(*event.Store) error) (err error) {
	st, err := openEvent(dir)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close the event's database: %w", cerr))
		}
	}()
	return f(st)
}

func eventCommand() *cli.Command {
	return &cli.Command{
		Name:  "event",
		Usage: "set up and look after an event: its configuration, teams, organizer token and backups",
		Description: `An event is a directory: event.toml (its game, hours, limits and quotas),
event.db (teams, submissions, games), uploads/ and validations/. Make one with
'arena event init', add the teams, make the organizer's token, then run it
with 'arena serve --event DIR'. These commands may run while it is served.`,
		Subcommands: []*cli.Command{
			{
				Name:      "init",
				Usage:     "make an event directory and its event.toml, every option at its default",
				UsageText: "arena event init DIR [--game G]",
				Description: `Creates DIR if needed and writes DIR/event.toml for the game: every option
shown with its default and what it does, the game's rule options listed
commented out. An existing event.toml is never overwritten. The name of the
event's log (DIR/log.origin, arena/ and the directory's name) is fixed too:
the event keeps it wherever it is served from.`,
				Flags:  []cli.Flag{gameFlag()},
				Action: eventInit,
			},
			{
				Name:  "teams",
				Usage: "the event's teams",
				Subcommands: []*cli.Command{{
					Name:      "import",
					Usage:     "add the teams of a CSV file and print each new team's token",
					UsageText: "arena event teams import DIR TEAMS.csv   (- reads standard input)",
					Description: `Adds one team per line of the CSV file: its name, then optionally its members
and a contact (a first line starting with "name" is a header). Prints each
new team's token: it is shown only this once (the event keeps only its hash),
so hand it to the team now. Teams that exist already are skipped, and said
so: importing the file again after adding lines adds only the new ones.
--format csv or json prints the new teams (name, members, contact, the
name their bot plays as, token) for a mail merge, the notes on stderr.`,
					Flags:  []cli.Flag{&cli.StringFlag{Name: "format", Value: "table", Usage: "how the new teams' tokens are printed: table, csv or json"}},
					Action: eventTeamsImport,
				}},
			},
			{
				Name:      "admin-token",
				Usage:     "make the organizer's token (the one before stops working)",
				UsageText: "arena event admin-token DIR",
				Description: `Prints a new token for the organizer's pages, shown only this once. The token
before it, if any, stops working at once and its logins end.`,
				Action: eventAdminToken,
			},
			{
				Name:      "backup",
				Usage:     "copy the event, consistent, while it is served",
				UsageText: "arena event backup DIR OUT",
				Description: `Copies the whole event in DIR to the new directory OUT while it is served:
the event's database and every tournament's (the final, each ladder pair and
scrimmage) as of one instant each, then every other file: event.toml, the
signing key, the final log's key and name, the workers' keys, the uploads,
validations, games and disputes. Prints what it copied. OUT is an event in
its own right: 'arena serve --event OUT' serves it with every game, its log
under the same name and key, and 'arena standings OUT/final' reads its
final. Left out: uploads still arriving, and the workers' queue.`,
				Action: eventBackup,
			},
			{
				Name:      "publish",
				Usage:     "write the final's bundle: its signed log, every game's public transcript and the standings",
				UsageText: "arena event publish [--submissions] DIR OUT",
				Description: `Writes the final of the event in DIR to the new directory OUT, for anyone to
check with 'arena verify': the final's append-only log as static tiles with
its latest signed checkpoint (log/checkpoint, log/tile/...), every game's
transcript as anyone may see it (each team's own output and file names left
out, their hashes kept), the standings (standings.json), the log's public key
(key.txt) and a README saying how to check it. With --submissions it also
writes each finalist's upload, as its team uploaded it, to OUT/submissions
(named by the bot name it plays under): anyone can then play the final again
with 'arena verify --replay OUT/submissions'. Any static web server can
serve OUT; arena verify takes its URL too. See docs/verify.md.`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "submissions", Usage: "publish the finalists' uploads too (OUT/submissions), for arena verify --replay"},
				},
				Action: eventPublish,
			},
			{
				Name:      "close",
				Usage:     "stop uploads and pin every team's active submission for the final",
				UsageText: "arena event close DIR",
				Description: `Closes the event in DIR now: uploads, scrimmages and the ladder stop, and
each enabled team's active submission is pinned for the final. Prints what
was pinned, with each submission's hash, and the teams left out (no
submission that passed or was admitted; disabled). Closing again changes
nothing; 'arena event reopen DIR' undoes it until the final starts.`,
				Action: eventClose,
			},
			{
				Name:      "reopen",
				Usage:     "undo close: uploads, scrimmages and the ladder go on, nothing pinned (until the final starts)",
				UsageText: "arena event reopen DIR",
				Description: `Undoes 'arena event close DIR' (or the organizer page's close): uploads are
taken again within event.toml's hours, scrimmages and the ladder go on, and
nothing stays pinned. Refused once the final has started: its games were
played with the pinned submissions.`,
				Action: eventReopen,
			},
			{
				Name:      "final",
				Usage:     "play the final: a round robin (a Swiss tournament, a bracket, stages, a rating final) of the pinned submissions",
				UsageText: "arena event final DIR [--format round-robin|swiss|knockout|double-elimination|stages|rating] [--rounds R] [--top N] [--advance K] [--then F] [--budget G] [--games-per-pair N] [--concurrency N] [--seed S]",
				Description: `Plays the final of the event in DIR (closing it first if it is open): a round
robin of the pinned submissions (--format swiss: a Swiss tournament of
--rounds rounds, default ceil(log2 teams) + 2; knockout, double-elimination:
a bracket seeded by the ladder as it stood at the close; stages: a Swiss
qualifier whose top --advance play a --then stage; rating: games where the
ranks are least sure, at most --budget; --top N: only the ladder's top N
teams play, a qualifying stage), with the game, rules and limits of
event.toml, through the runner of arena tournament, in DIR/final. Before
the first game it prints how many games each format would play for these
teams and how long that takes at the pace of the games played here. It is a
tournament directory like any other: arena standings DIR/final, its report,
replay of every game; run the same command to resume it after an
interruption.

Everything the final needs is checked before uploads close: at least two
teams that play, each one's submission loaded and built, a sandbox that
answers. A final that cannot start exits 1 with the reason, and nothing is
closed.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Value: tournament.RoundRobin, Usage: words.Or(event.FinalFormats()) + " (every format but a round robin seeds the teams by the ladder's ratings at the close)"},
					flagNamed(tournamentCommand().Flags, "rounds"),
					&cli.IntFlag{Name: "advance", Usage: "with --format stages: how many of the qualifier's top teams play the second stage", DefaultText: "16, or every team of fewer"},
					&cli.StringFlag{Name: "then", Usage: "with --format stages: the second stage, round-robin or double-elimination", DefaultText: tournament.DoubleElimination},
					flagNamed(tournamentCommand().Flags, "budget"),
					flagNamed(tournamentCommand().Flags, "playoff"),
					&cli.IntFlag{Name: "top", Usage: "the ladder's top N teams at the close play the final, the rest not", DefaultText: "every team"},
					flagNamed(tournamentCommand().Flags, "games-per-pair"),
					flagNamed(tournamentCommand().Flags, "concurrency"),
					flagNamed(tournamentCommand().Flags, "seed"),
					flagNamed(tournamentCommand().Flags, "max-attempts"),
					flagNamed(matchFlags(), "sandbox"),
					imageFlag(),
					flagNamed(matchFlags(), "runtime"),
					flagNamed(buildFlags(), "build-cache"),
				},
				Action: eventFinal,
			},
			{
				Name:      "ladder",
				Usage:     "print the rated ladder",
				UsageText: "arena event ladder DIR [--json]",
				Description: `Prints the ladder of the event in DIR as its home page shows it: rank, team
(and the name its bot plays under), Glicko-2 rating with its deviation, rated games, and the active submission's
hash and age. A team's new active submission keeps its rating and starts
again from the deviation of a new player.`,
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
				Action: eventLadder,
			},
		},
	}
}

func eventLadder(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("event ladder takes one argument: the event's directory")
	}
	var table []event.Standing
	if err := withEvent(c.Args().First(), func(st *event.Store) (err error) {
		table, err = st.Ladder(c.Context)
		return err
	}); err != nil {
		return err
	}
	if c.Bool("json") {
		if table == nil {
			table = []event.Standing{}
		}
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(table)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tTEAM\tBOT\tRATING\tGAMES\tSUBMISSION\tSINCE")
	for _, s := range table {
		rank, rated := fmt.Sprint(s.Rank), fmt.Sprintf("%.0f ± %.0f", s.Rating.Rating, s.Rating.Deviation)
		if s.Rank == 0 {
			rank, rated = "-", "not yet rated"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t#%d %.12s\t%s\n", rank, s.Name, s.Bot, rated, s.Games,
			s.Submission, s.SHA256, s.Since.UTC().Format("2006-01-02 15:04"))
	}
	if len(table) == 0 {
		fmt.Fprintln(tw, "(no team has a submission that passed its validation yet)")
	}
	return tw.Flush()
}

func eventInit(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("event init takes one argument: the event's directory (made if needed)")
	}
	dir, game := c.Args().First(), c.String("game")
	text, err := event.Template(game)
	if err != nil {
		return usagef("--game: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, event.ConfigFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return usagef("%s exists: arena event init does not overwrite it (edit it, or remove it first to start again from the defaults)", path)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(err, os.Remove(path))
	}
	// The log's name is fixed now, from the directory's own name (not
	// "." for arena event init .), and kept wherever the event is served
	// from.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := event.FixLogOrigin(abs); err != nil {
		return fmt.Errorf("the event's log: %w", err)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "wrote %s: an event of %s, every option at its default and explained\n\n", path, game)
	fmt.Fprintf(w, "next:\n")
	fmt.Fprintf(w, "  1. edit %s: the title, when uploads open and close, limits, quotas\n", path)
	fmt.Fprintf(w, "  2. arena event teams import %s TEAMS.csv\n", dir)
	fmt.Fprintf(w, "     adds the teams (a line each: name[,members[,contact]]) and prints their tokens\n")
	fmt.Fprintf(w, "  3. arena event admin-token %s\n", dir)
	fmt.Fprintf(w, "     the organizer's token\n")
	fmt.Fprintf(w, "  4. arena serve --event %s\n", dir)
	fmt.Fprintf(w, "     runs the event's server\n")
	return nil
}

func eventTeamsImport(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("event teams import takes two arguments: the event's directory and a CSV file of teams (- for standard input)")
	}
	dir, file := c.Args().Get(0), c.Args().Get(1)
	format := c.String("format")
	if format != "table" && format != "csv" && format != "json" {
		return usagef("--format: want table, csv or json, got %q", format)
	}
	return withEvent(dir, func(st *event.Store) error {
		var r io.Reader = c.App.Reader
		if r == nil {
			r = os.Stdin
		}
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return usagef("%v", err)
			}
			defer f.Close()
			r = f
		}
		added, existing, err := st.ImportTeams(c.Context, r)
		w := c.App.Writer
		if format != "table" {
			// The tokens alone on stdout, for a program; the notes beside.
			if perr := printNewTeams(w, format, added); perr != nil {
				return fmt.Errorf("print the tokens: %w (the teams were added: give them new ones with the organizer's pages)", perr)
			}
			w = c.App.ErrWriter
			fmt.Fprintf(w, "%s added. Each token is shown only this once (the event keeps only its hash): hand each team its own now.\n",
				words.Plural(len(added), "team"))
		} else if len(added) > 0 {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPLAYS AS\tTOKEN")
			for _, t := range added {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.BotName, t.Token)
			}
			if ferr := tw.Flush(); ferr != nil {
				return fmt.Errorf("print the tokens: %w (the teams were added: give them new ones with the organizer's pages)", ferr)
			}
			fmt.Fprintf(w, "\n%s added. Each token is shown only this once (the event keeps only its hash): hand each team its own now.\n",
				words.Plural(len(added), "team"))
			fmt.Fprintln(w, "PLAYS AS is the name each team's bot plays under in games and file names; pages show the team's own name.")
		} else {
			fmt.Fprintln(w, "no team added")
		}
		for _, t := range added {
			if t.Collided != "" {
				fmt.Fprintf(w, "note: %q plays as %s: its name reduces to the same bot name as %q's\n", t.Name, t.BotName, t.Collided)
			}
		}
		if len(existing) > 0 {
			fmt.Fprintf(w, "already there, skipped: %s\n", strings.Join(existing, ", "))
		}
		if err != nil {
			if len(added) > 0 {
				return usagef("%s: %v (the teams above were added; fix the line and import the file again: they are skipped)", file, err)
			}
			return usagef("%s: %v", file, err)
		}
		return nil
	})
}

// printNewTeams writes the teams just added, with their tokens, as CSV (a
// header line, then name, members, contact, plays as, token) or as a JSON
// array.
func printNewTeams(w io.Writer, format string, added []event.NewTeam) error {
	if format == "json" {
		type row struct {
			Name    string `json:"name"`
			Members string `json:"members"`
			Contact string `json:"contact"`
			PlaysAs string `json:"playsAs"`
			Token   string `json:"token"`
		}
		rows := make([]row, 0, len(added))
		for _, t := range added {
			rows = append(rows, row{t.Name, t.Members, t.Contact, t.BotName, t.Token})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"name", "members", "contact", "plays_as", "token"}); err != nil {
		return err
	}
	for _, t := range added {
		if err := cw.Write([]string{t.Name, t.Members, t.Contact, t.BotName, t.Token}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func eventAdminToken(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("event admin-token takes one argument: the event's directory")
	}
	return withEvent(c.Args().First(), func(st *event.Store) error {
		token, err := st.NewAdminToken(c.Context)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.App.ErrWriter, "arena: the organizer's token, shown only this once; the one before, if any, no longer works and its logins ended:")
		_, err = fmt.Fprintln(c.App.Writer, token)
		return err
	})
}

func eventBackup(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("event backup takes two arguments: the event's directory and a new directory for the copy")
	}
	dir, out := c.Args().Get(0), c.Args().Get(1)
	return withEvent(dir, func(st *event.Store) error {
		rep, err := st.Backup(c.Context, out)
		if err != nil {
			return err
		}
		w := c.App.Writer
		fmt.Fprintf(w, "copied the event in %s to %s in %s: %s in %s\n", dir, out, rep.Took.Round(time.Millisecond),
			words.Plural(rep.Files, "file"), units.BytesSize(float64(rep.Bytes)))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range rep.Parts {
			what := words.Plural(p.Files, "file") + ", " + units.BytesSize(float64(p.Bytes))
			if p.Databases > 0 {
				what += fmt.Sprintf(" (%s as of one instant)", words.Plural(p.Databases, "database"))
			}
			fmt.Fprintf(tw, "  %s\t%s\n", p.Name, what)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, sk := range rep.Skipped {
			fmt.Fprintf(w, "  left out: %s\n", sk)
		}
		fmt.Fprintf(w, "it is an event of its own: arena serve --event %s serves it (see docs/serve.md, Backups)\n", out)
		return nil
	})
}
