//go:build !team

package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/words"
)

func eventClose(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("event close takes one argument: the event's directory")
	}
	return withEvent(c.Args().First(), func(st *event.Store) error {
		entries, err := st.CloseUploads(c.Context)
		if err != nil {
			return err
		}
		at, _, err := st.Closed(c.Context)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "uploads closed at %s; pinned for the final:\n", at.UTC().Format(time.RFC3339))
		tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TEAM\tSUBMISSION\tSHA-256")
		for _, e := range entries {
			fmt.Fprintf(tw, "%s\t#%d\t%s\n", e.Name, e.Submission, e.SHA256)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		look, err := st.FinalOutlook(c.Context)
		if err != nil {
			return err
		}
		printLeftOut(c.App.Writer, look)
		fmt.Fprintf(c.App.Writer, "until the final starts, arena event reopen %s undoes this\n", c.Args().First())
		return nil
	})
}

// printLeftOut says which teams the final leaves out, and why.
func printLeftOut(w io.Writer, look event.Outlook) {
	names := func(teams []event.Team) string {
		var out []string
		for _, t := range teams {
			out = append(out, t.Name)
		}
		return strings.Join(out, ", ")
	}
	if len(look.Missing) > 0 {
		fmt.Fprintf(w, "not playing, without a submission that passed or was admitted: %s\n", names(look.Missing))
	}
	if len(look.Disabled) > 0 {
		fmt.Fprintf(w, "not playing, disabled: %s\n", names(look.Disabled))
	}
}

func eventReopen(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("event reopen takes one argument: the event's directory")
	}
	return withEvent(c.Args().First(), func(st *event.Store) error {
		if err := st.ReopenUploads(c.Context); err != nil {
			var re *event.RefusedError
			if errors.As(err, &re) {
				return failf("%v", err)
			}
			return err
		}
		_, err := fmt.Fprintln(c.App.Writer, "uploads are open again (within event.toml's hours); nothing is pinned; scrimmages and the ladder go on")
		return err
	})
}

func eventFinal(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("event final takes one argument: the event's directory")
	}
	if c.Int("concurrency") < 1 || c.Int("max-attempts") < 1 || c.Int("games-per-pair") < 1 {
		return usagef("--games-per-pair, --concurrency and --max-attempts must be at least 1")
	}
	if c.Int("top") < 0 {
		return usagef("--top: a number of teams, 0 for every team")
	}
	playoff, err := tournament.ParsePlayoff(c.String("playoff"))
	if err != nil {
		return usagef("--playoff: %v", err)
	}
	shape := event.Shape{Format: c.String("format"), Rounds: c.Int("rounds"), Top: c.Int("top"), Advance: c.Int("advance"),
		Then: c.String("then"), Budget: c.Int("budget"), GamesPerPair: c.Int("games-per-pair"), Playoff: playoff}
	if err := shape.Check(); err != nil {
		return usagef("--%v", err)
	}
	dir := c.Args().First()
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		return err
	}
	resolved, err := cfg.Settings().Resolve()
	if err != nil {
		return err
	}
	cache, err := build.CacheDir(c.String("build-cache"))
	if err != nil {
		return fmt.Errorf("%w (--build-cache)", err)
	}
	var given *uint64
	if c.IsSet("seed") {
		s := c.Uint64("seed")
		given = &s
	}
	final := filepath.Join(dir, event.FinalDir)
	seed, err := runner.SeedFor(c.Context, final, given)
	if err != nil {
		return err
	}
	backend, closer, err := openBackend(c, sandboxConfig(c), true)
	if err != nil {
		return err
	}
	defer closer()
	var sum *tournament.Summary
	err = withEvent(dir, func(st *event.Store) error {
		builder, err := services.NewBuilder(cfg, dir, backend, resolved.Limits, cache)
		if err != nil {
			return err
		}
		final, err := services.NewFinal(st, cfg, resolved, backend, c.String("image"), builder, arenaVersion())
		if err != nil {
			return err
		}
		final.Shape, final.Seed, final.Concurrency, final.MaxAttempts = shape, seed, c.Int("concurrency"), c.Int("max-attempts")
		plan, err := services.PrepareFinal(c.Context, st, final)
		var refused *event.RefusedError
		if errors.As(err, &refused) {
			return failf("%v", err)
		}
		if err != nil {
			return err
		}
		look, err := st.FinalOutlook(c.Context)
		if err != nil {
			return err
		}
		printLeftOut(c.App.ErrWriter, look)
		est, err := st.FinalEstimate(c.Context, shape, len(plan.Entries()), c.Int("concurrency"))
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "arena: %s, each format would play:\n", est.Intro())
		for _, f := range est.Formats {
			mark := " "
			if f.Chosen {
				mark = "*"
			}
			fmt.Fprintf(c.App.ErrWriter, "  %s %s\n", mark, f)
		}
		sum, err = plan.Play(c.Context)
		return err
	})
	if err != nil {
		return err
	}
	return printSummary(c, final, sum)
}

func eventPublish(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("event publish takes two arguments: the event's directory and a new directory for the bundle")
	}
	dir, out := c.Args().Get(0), c.Args().Get(1)
	return withEvent(dir, func(st *event.Store) error {
		size, err := st.PublishFinal(c.Context, out)
		if err != nil {
			return err
		}
		_, key, err := st.LogKeys()
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "published the final of %s to %s: a log of %s\nanyone checks it with: arena verify --key '%s' %s\n", dir, out, words.Plural(int(size), "entry"), key, out)
		if !c.Bool("submissions") {
			return nil
		}
		n, err := st.PublishSubmissions(c.Context, out)
		if err != nil {
			return err
		}
		subs := filepath.Join(out, event.BundleSubmissions)
		fmt.Fprintf(c.App.Writer, "and the finalists' %s in %s: anyone plays the final again with: arena verify --key '%s' --replay %s %s\n", words.Plural(n, "upload"), subs, key, subs, out)
		return nil
	})
}
