// Package randombot is the built-in random bot, cmd/arena-random: run under
// the name Prefix+GAME (or GAME+Suffix, as the examples name it), it plays
// GAME with a uniformly random legal move, over the game's own protocol. It
// is the opponent of validation's matches (validate.Opponent) and the
// example line-game bot. It knows no game by name: it rebuilds the position
// from what it is given (Game.FromView, or a rules.Follower) and must never
// need anything the protocol does not hand every bot. It imports nothing
// but the rules, so that the program every validation box installs weighs
// a few MB.
package randombot

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Prefix + a game's name is the name under which arena-random plays that
// game.
const Prefix = "arena-random-"

// A game's name + Suffix is the name under which the examples install it
// (make builds bin/examples/chess-random).
const Suffix = "-random"

// Program is the built-in random bot's executable, as make builds it.
const Program = "arena-random"

// GameOf says which game an executable named argv0 plays as the random bot,
// if it is one: arena-random-GAME, or GAME-random.
func GameOf(argv0 string) (game string, ok bool) {
	base := filepath.Base(argv0)
	if game, ok := strings.CutPrefix(base, Prefix); ok {
		return game, game != ""
	}
	if base == Program {
		return "", false
	}
	if game, ok := strings.CutSuffix(base, Suffix); ok && game != "" {
		return game, true
	}
	return "", false
}

// Main plays game over its protocol as the process whose arguments are args
// (without the program's name) and returns the exit code.
func Main(game string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g, err := rules.Lookup(game)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if p := g.Protocol(); p.Files != nil {
		return fileTurn(g, p.Files, args, stderr)
	}
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	if f, ok := g.(rules.Follower); ok {
		return follow(f, in, stdout, stderr)
	}
	for in.Scan() {
		// A line that is not a position ("white", the opponent's move, the
		// time left) asks nothing.
		st, err := g.FromView(nil, bytes.TrimSpace(in.Bytes()))
		if err != nil {
			continue
		}
		if moves := st.LegalMoves(); len(moves) > 0 {
			if _, err := fmt.Fprintln(stdout, moves[rand.IntN(len(moves))]); err != nil {
				return 1
			}
		}
	}
	return 0
}

// follow plays a game whose bots keep what they are told: every line goes to
// the game's Listener, and each question is answered with one of the answers
// it offers. It returns the exit code.
func follow(f rules.Follower, in *bufio.Scanner, stdout, stderr io.Writer) int {
	l, err := f.Follow(nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	for in.Scan() {
		answers, err := l.Hear(in.Text())
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		if len(answers) == 0 {
			continue
		}
		a := answers[rand.IntN(len(answers))]
		l.Said(a)
		if _, err := fmt.Fprintln(stdout, a); err != nil {
			return 1
		}
	}
	return 0
}

// fileTurn answers one turn of a file game and returns the exit code. The
// move depends on the state alone, so a rerun reproduces it.
func fileTurn(g rules.Game, p *rules.FileProtocol, args []string, stderr io.Writer) int {
	rejected, internal := exitFor(p, rules.BotRejectedState), exitFor(p, rules.BotError)
	if len(args) != 1 {
		fmt.Fprintf(stderr, "usage: %s%s GAME_DIR/%s\n", Prefix, g.Name(), p.StateFile)
		return rejected
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "read state:", err)
		return rejected
	}
	st, err := g.FromView(nil, raw)
	if err != nil {
		fmt.Fprintln(stderr, "malformed state:", err)
		return rejected
	}
	moves := st.LegalMoves()
	if len(moves) == 0 {
		fmt.Fprintln(stderr, "no legal move")
		return rejected
	}
	h := fnv.New64a()
	h.Write(raw)
	m := moves[rand.New(rand.NewPCG(h.Sum64(), 0)).IntN(len(moves))]
	if err := os.WriteFile(filepath.Join(filepath.Dir(args[0]), p.MoveFile), st.EncodeMove(m), 0o644); err != nil {
		fmt.Fprintln(stderr, "write move:", err)
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
