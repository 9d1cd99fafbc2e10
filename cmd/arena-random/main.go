// Command arena-random is arena's built-in random bot, the opponent of a
// validation's full matches: installed as arena-random-GAME, it plays GAME
// with a uniformly random legal move over the game's own protocol
// (harness/randombot). It is static and imports nothing but the rules, so
// that every validation box installs a few MB, not the arena binary.
package main

import (
	"fmt"
	"os"

	"github.com/arenabots/arena/harness/randombot"
	_ "github.com/arenabots/arena/rules/games"
)

func main() {
	game, ok := randombot.GameOf(os.Args[0])
	args := os.Args[1:]
	if !ok && len(args) > 0 {
		// Run by hand: arena-random GAME [ARGS].
		game, args = args[0], args[1:]
	} else if !ok {
		fmt.Fprintf(os.Stderr, "usage: %sGAME [ARGS] (the name says the game), or %s GAME [ARGS]\n", randombot.Prefix, randombot.Program)
		os.Exit(2)
	}
	os.Exit(randombot.Main(game, args, os.Stdin, os.Stdout, os.Stderr))
}
