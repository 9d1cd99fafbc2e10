package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/witness"
)

func witnessCommand() *cli.Command {
	return &cli.Command{
		Name:      "witness",
		Usage:     "cosign an event's log checkpoints, refusing any that does not extend the last one cosigned (C2SP tlog-witness)",
		UsageText: "arena witness --dir DIR --name NAME --log KEY [--log KEY...] [--listen ADDR]",
		Description: `Runs a witness of the logs whose public keys --log gives (an event's key, as its
home page shows it before the final): the event's server posts each new
checkpoint of its log to ADDR/add-checkpoint with a proof that it extends the
last one this witness cosigned; the witness checks the log's signature and the
proof, records the checkpoint in DIR/witness.db, and answers with its
cosignature. It never cosigns a checkpoint that does not extend the last it
cosigned: a log shown to some as one history and to others as another is
refused by every witness that saw the first. A team, or anyone the teams
trust, runs one and gives the organizer its address and its key (printed at
start, kept in DIR/witness.key); arena verify --witness KEY --quorum N then
checks the published final's checkpoint carries their cosignatures.

It speaks plain HTTP: what it answers is signed, so a proxy in front of it
may add TLS. See docs/verify.md.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "the witness's directory: its key and what it cosigned (made at first start)", Required: true, TakesFile: true},
			&cli.StringFlag{Name: "name", Usage: "the witness's name, in its key and its cosignatures (no spaces or +)", Required: true},
			&cli.StringSliceFlag{Name: "log", Usage: "a log's public key (NAME+HASH+KEY, from the event's home page): the witness cosigns its checkpoints (repeatable)", Required: true},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8090", Usage: "the address it answers on"},
		},
		Action: witnessAction,
	}
}

func witnessAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("witness takes no argument, only its flags")
	}
	w, err := witness.Open(c.String("dir"), c.String("name"), c.StringSlice("log"))
	if err != nil {
		return usagef("%v", err)
	}
	defer w.Close()
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "arena: witness %s at http://%s, its key: %s\n", c.String("name"), ln.Addr(), w.VerifierKey())
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	go func() {
		<-c.Context.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
