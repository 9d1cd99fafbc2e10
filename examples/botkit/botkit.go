// Package botkit is the plumbing shared by the example Code Clash bots: it
// follows the bot guide to the letter. The bot is run as
// `/path/to/bot /path/to/game_dir/state.json` with game_dir as its working
// directory; it reads state.json, writes move.json next to it and exits 0, or
// exits 1 when the state is malformed, 2 when it has no legal move to offer, and
// 3 on an internal error. It keeps one data file in game_dir between turns.
package botkit

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"

	"github.com/arenabots/arena/rules/codeclash"
)

// Exit codes of the guide.
const (
	ExitOK       = 0
	ExitBadState = 1
	ExitIllegal  = 2
	ExitInternal = 3
)

// Memory is what the example bots keep in their data file.
type Memory struct {
	Turns int      `json:"turns"`
	Moves []string `json:"moves"`
}

// Run is a bot's main: it reads the state, asks choose for a move and writes it.
// choose gets a random source seeded from the state and the bot's memory, so the
// same game gives the same moves.
func Run(dataFile string, choose func(s *codeclash.State, rng *rand.Rand, mem *Memory) (codeclash.Move, bool)) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, "internal error:", r)
			os.Exit(ExitInternal)
		}
	}()
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bot /path/to/game_dir/state.json")
		os.Exit(ExitBadState)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "read state:", err)
		os.Exit(ExitBadState)
	}
	st, err := codeclash.FromView(codeclash.DefaultOptions(), raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, "malformed state:", err)
		os.Exit(ExitBadState)
	}
	var mem Memory
	if data, err := os.ReadFile(dataFile); err == nil {
		json.Unmarshal(data, &mem)
	}
	h := fnv.New64a()
	h.Write(raw)
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(mem.Turns)))
	m, ok := choose(st, rng, &mem)
	if !ok {
		fmt.Fprintln(os.Stderr, "no legal move")
		os.Exit(ExitIllegal)
	}
	mem.Turns++
	mem.Moves = append(mem.Moves, m.String())
	if len(mem.Moves) > 50 {
		mem.Moves = mem.Moves[len(mem.Moves)-50:]
	}
	if data, err := json.Marshal(mem); err == nil {
		os.WriteFile(dataFile, data, 0o644)
	}
	if err := os.WriteFile("move.json", st.EncodeMove(m), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "write move:", err)
		os.Exit(ExitInternal)
	}
}
