// Command line-random is an example bot for the games arena plays over
// stdin/stdout (chess, acm6x6, checkers). It plays the game its executable is
// named after, "<game>-random" (make builds chess-random, acm6x6-random and
// checkers-random): it ignores the colour and status lines, answers every
// request line with a random legal move, and never prints before it is asked.
package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games"
)

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), "-random")
	g, err := rules.Lookup(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "name this executable <game>-random:", err)
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		st, err := g.FromView(nil, []byte(line))
		if err != nil {
			continue // "white", "black", "A 118": nothing to answer
		}
		moves := st.LegalMoves()
		if len(moves) == 0 {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(line))
		fmt.Fprintln(out, moves[rand.New(rand.NewPCG(h.Sum64(), 1)).IntN(len(moves))])
		out.Flush()
	}
}
