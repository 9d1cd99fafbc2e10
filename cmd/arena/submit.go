package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/api"
	"github.com/arenabots/arena/harness/client"
)

func submitCommand() *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "upload a submission to an event's server and print its validation report",
		UsageText: "arena submit --server URL --token-file FILE [--no-wait] [--timeout 30m] BOT",
		Description: `Uploads BOT to the event at --server as the team whose token --token-file
holds: a file (a submission ZIP, an executable, a source file) as it is, or a
directory as a ZIP of its files (symbolic links are refused). Then it waits for
the validation, printing its progress on stderr, and prints the report on
stdout: the same checks as 'arena validate', run by the event with its limits.

Exit 0 when the submission passed, 1 when it failed its validation, 2 for bad
usage or when the upload or the validation could not be done (the server's
reason is printed).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Usage: "the event's address, e.g. https://arena.example.org"},
			&cli.StringFlag{Name: "token-file", Usage: "file holding the team's token (the organizer hands it out)", TakesFile: true},
			&cli.BoolFlag{Name: "no-wait", Usage: "print the stored submission's id, hash and state and return without waiting for its validation"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Minute, Usage: "how long to wait for the validation; the server goes on after it"},
		},
		Action: submit,
	}
}

func submit(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("submit takes one argument: the bot (a submission ZIP, a directory, an executable or a source file)")
	}
	bot := c.Args().First()
	u, err := url.Parse(c.String("server"))
	if c.String("server") == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--server: want the event's address, such as https://arena.example.org, got %q", c.String("server"))
	}
	if c.String("token-file") == "" {
		return usagef("--token-file is required: the file holding the team's token")
	}
	data, err := os.ReadFile(c.String("token-file"))
	if err != nil {
		return usagef("--token-file: %v", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return usagef("--token-file %s is empty: put the team's token in it", c.String("token-file"))
	}
	if c.Duration("timeout") <= 0 {
		return usagef("--timeout must be positive")
	}
	if _, err := os.Stat(bot); err != nil {
		return usagef("%v", err)
	}
	cl := &client.Client{Server: c.String("server"), Token: token}
	sub, err := cl.Upload(c.Context, bot)
	if err != nil {
		return fmt.Errorf("upload %s: %w", bot, err)
	}
	stderr := c.App.ErrWriter
	fmt.Fprintf(stderr, "arena: uploaded %s as submission %d (%s, %s)\n", bot, sub.ID, sub.Filename, units.BytesSize(float64(sub.Size)))
	if c.Bool("no-wait") {
		tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "id\t%d\nsha256\t%s\nstate\t%s\n", sub.ID, sub.SHA256, sub.State)
		return tw.Flush()
	}
	wait, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	id, last := sub.ID, sub.State
	sub, err = cl.Wait(wait, id, func(s api.Submission) {
		last = s.State
		fmt.Fprintf(stderr, "arena: submission %d: %s\n", s.ID, s.State)
	})
	switch {
	case err != nil && c.Context.Err() != nil:
		return fmt.Errorf("stopped waiting: submission %d is uploaded and its validation goes on", id)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("gave up waiting after %s: submission %d is still %s; its validation goes on (its report will be on the event's pages)",
			c.Duration("timeout"), id, last)
	case err != nil:
		return err
	case sub.State == api.Errored:
		return fmt.Errorf("submission %d could not be validated: %s (not the bot's fault: ask the organizer to validate it again)", sub.ID, sub.Summary)
	}
	text, err := cl.ReportText(c.Context, sub.ID)
	if err != nil {
		return fmt.Errorf("submission %d %s its validation, but its report could not be read: %w", sub.ID, sub.State, err)
	}
	if _, err := io.WriteString(c.App.Writer, text); err != nil {
		return err
	}
	if sub.State == api.Failed {
		return failf("submission %d failed its validation: %s", sub.ID, sub.Summary)
	}
	if sub.Active {
		fmt.Fprintf(stderr, "arena: submission %d passed: it now plays for the team\n", sub.ID)
	} else {
		fmt.Fprintf(stderr, "arena: submission %d passed; another of the team's submissions plays (pinned, or newer)\n", sub.ID)
	}
	return nil
}
