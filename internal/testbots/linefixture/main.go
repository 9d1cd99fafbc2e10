// Command linefixture is a line-protocol fixture bot for any game arena serves
// over stdin/stdout. It runs under the name GAME.MODE (or just MODE for chess)
// and answers with a legal move of GAME, except that MODE makes it misbehave in
// one way:
//
//	legal     a seeded random legal move, every time
//	silent    reads, never answers
//	early     prints a line before it is asked
//	quit-3    answers three times, then exits
//	garbage   answers with something that is not a move
//	slow-N    sleeps N ms before every answer
//	flood     answers, then floods its output
package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games"
)

func main() {
	game, mode, ok := strings.Cut(filepath.Base(os.Args[0]), ".")
	if !ok {
		game, mode = "chess", game
	}
	g, err := rules.Lookup(game)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if mode == "early" {
		fmt.Println("ready!")
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	answered := 0
	// A game whose bots follow the dialogue is played with its Listener;
	// the others rebuild the position from each question.
	var l rules.Listener
	if f, ok := g.(rules.Follower); ok {
		if l, err = f.Follow(nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	seq := 0
	for in.Scan() {
		line := in.Text()
		var moves []string
		if l != nil {
			if moves, err = l.Hear(line); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			seq++
			line = fmt.Sprint(line, seq) // every question its own seed
		} else if st, err := g.FromView(nil, []byte(line)); err == nil {
			for _, m := range st.LegalMoves() {
				moves = append(moves, m.String())
			}
		}
		if len(moves) == 0 || mode == "silent" {
			continue // not a question
		}
		if ms, ok := strings.CutPrefix(mode, "slow-"); ok {
			n, _ := strconv.Atoi(ms)
			time.Sleep(time.Duration(n) * time.Millisecond)
		}
		h := fnv.New64a()
		h.Write([]byte(line))
		answer := moves[rand.New(rand.NewPCG(h.Sum64(), 1)).IntN(len(moves))]
		if l != nil {
			l.Said(answer)
		}
		if mode == "garbage" {
			answer = "resign please"
		}
		fmt.Fprintln(out, answer)
		out.Flush()
		answered++
		if mode == "quit-3" && answered == 3 {
			os.Exit(0)
		}
		if mode == "flood" {
			for {
				fmt.Fprintln(out, strings.Repeat("x", 1000))
			}
		}
	}
}
