package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/sandbox"
)

// buildFlags set how bots handed in as source are built.
func buildFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "languages", Usage: "languages file: how each kind of source is built and run (default: the built-in table, docs/languages.md; arena languages prints it)", TakesFile: true},
		&cli.DurationFlag{Name: "build-timeout", Value: langs.BuildTimeout, Usage: "wall-clock limit of one bot's build"},
		&cli.StringFlag{Name: "build-cache", Usage: "directory of built bots, reused while source, language and image are unchanged (default: arena/builds in the user cache directory; \"none\": no cache)"},
	}
}

// languages is the table --languages names, or the built-in one.
func languages(c *cli.Context) (langs.Languages, error) {
	f := c.String("languages")
	if f == "" {
		return langs.Default(), nil
	}
	l, err := langs.Load(f)
	if err != nil {
		return nil, usagef("--languages: %v", err)
	}
	return l, nil
}

// newBuilder builds on backend under the bots' limits.
func newBuilder(c *cli.Context, backend sandbox.Backend, lim sandbox.Limits, labels map[string]string) (*build.Builder, error) {
	langs, err := languages(c)
	if err != nil {
		return nil, err
	}
	if c.Duration("build-timeout") <= 0 {
		return nil, usagef("--build-timeout must be positive")
	}
	cache, err := build.CacheDir(c.String("build-cache"))
	if err != nil {
		return nil, fmt.Errorf("%w (--build-cache)", err)
	}
	return &build.Builder{Backend: backend, Langs: langs, Limits: lim, Timeout: c.Duration("build-timeout"), Cache: cache, Labels: labels}, nil
}

// readyBots builds every bot handed in as source (build.ReadyAll) and says
// what it did.
func readyBots(c *cli.Context, b *build.Builder, bots []*submission.Bot) error {
	return b.ReadyAll(c.Context, bots, func(built *submission.Bot) {
		if built.BuildError != "" {
			fmt.Fprintf(c.App.ErrWriter, "arena: %s did not build (it loses its games): %s\n", built.Name, built.BuildError)
		} else {
			fmt.Fprintf(c.App.ErrWriter, "arena: %s\n", built.Choice)
		}
	})
}

func languagesCommand() *cli.Command {
	return &cli.Command{
		Name:  "languages",
		Usage: "print the languages table (how source submissions are built and run)",
		Description: `Prints the built-in languages table, or the one --languages names, in the
format a languages file takes: copy it, change a line, pass it with
--languages to match, tournament, validate and rerun.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "languages", Usage: "a languages file to check and print", TakesFile: true}},
		Action: func(c *cli.Context) error {
			if c.String("languages") == "" {
				fmt.Fprint(c.App.Writer, langs.DefaultTable())
				return nil
			}
			l, err := languages(c)
			if err != nil {
				return err
			}
			for _, e := range l.Exts() {
				fmt.Fprintln(c.App.Writer, l[e].Line())
			}
			return nil
		},
	}
}
