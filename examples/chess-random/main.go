// Command chess-random is an example bot for the chess line protocol: it
// waits for its colour, answers every "<move> <time> <time> <FEN>" line with a
// random legal move (e2e4, O-O, e7e8q) and ignores the A/D status lines. It
// never prints before it is asked.
package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/arenabots/arena/rules/chess"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		f := strings.Fields(line)
		if len(f) < 7 { // the colour line, or an "A 118" / "D 118" status line
			continue
		}
		st, err := chess.Game{}.FromView(nil, []byte(line))
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad position:", err)
			os.Exit(1)
		}
		moves := st.LegalMoves()
		if len(moves) == 0 {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(line))
		rng := rand.New(rand.NewPCG(h.Sum64(), 1))
		fmt.Fprintln(out, moves[rng.IntN(len(moves))])
		out.Flush()
	}
}
