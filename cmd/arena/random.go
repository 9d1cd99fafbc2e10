package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/arenabots/arena/rules"
)

// randomBotPrefix + a game's name is the name under which the arena
// executable plays that game as its built-in random bot, the opponent of
// `arena validate`. It knows no game: it rebuilds the position from what it
// is given (Game.FromView) and plays a random legal move.
const randomBotPrefix = "arena-random-"

// randomBotMain plays game over its protocol and exits.
func randomBotMain(game string) {
	g, err := rules.Lookup(game)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if p := g.Protocol(); p.Files != nil {
		os.Exit(randomFileTurn(g, p.Files, os.Args[1:]))
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	if f, ok := g.(rules.Follower); ok {
		os.Exit(follow(f, in))
	}
	for in.Scan() {
		st, err := g.FromView(nil, in.Bytes())
		if err != nil {
			continue
		}
		if moves := st.LegalMoves(); len(moves) > 0 {
			fmt.Println(moves[rand.IntN(len(moves))])
		}
	}
}

// follow plays a game whose bots keep what they are told: every line goes to
// the game's Listener, and each question is answered with one of the answers
// it offers. It returns the exit code.
func follow(f rules.Follower, in *bufio.Scanner) int {
	l, err := f.Follow(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for in.Scan() {
		answers, err := l.Hear(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if len(answers) == 0 {
			continue
		}
		a := answers[rand.IntN(len(answers))]
		l.Said(a)
		if _, err := fmt.Println(a); err != nil {
			return 1
		}
	}
	return 0
}

// randomFileTurn answers one turn of a file game and returns the exit code.
// The move depends on the state alone, so a rerun reproduces it.
func randomFileTurn(g rules.Game, p *rules.FileProtocol, args []string) int {
	rejected, internal := exitFor(p, rules.BotRejectedState), exitFor(p, rules.BotError)
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "usage: %s GAME_DIR/%s\n", filepath.Base(os.Args[0]), p.StateFile)
		return rejected
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "read state:", err)
		return rejected
	}
	st, err := g.FromView(nil, raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, "malformed state:", err)
		return rejected
	}
	moves := st.LegalMoves()
	if len(moves) == 0 {
		fmt.Fprintln(os.Stderr, "no legal move")
		return rejected
	}
	h := fnv.New64a()
	h.Write(raw)
	m := moves[rand.New(rand.NewPCG(h.Sum64(), 0)).IntN(len(moves))]
	if err := os.WriteFile(filepath.Join(filepath.Dir(args[0]), p.MoveFile), st.EncodeMove(m), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "write move:", err)
		return internal
	}
	return 0
}

// exitFor is the exit code the game reads as v, or 1.
func exitFor(p *rules.FileProtocol, v rules.Verdict) int {
	for code, w := range p.ExitVerdicts {
		if w == v {
			return code
		}
	}
	return 1
}
