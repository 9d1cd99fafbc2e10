package validate

import (
	"fmt"
	"os"

	"github.com/arenabots/arena/harness/randombot"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/internal/static"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Opponent is the built-in random bot of game, the full matches' opponent:
// the static arena-random that make builds beside arena (or found in PATH),
// installed in its box as randombot.Prefix+GAME, the name that says which
// game it plays.
func Opponent(game rules.Game) (*submission.Bot, error) {
	path, err := static.Find(randombot.Program)
	if err != nil {
		return nil, fmt.Errorf("the built-in random bot: %w", err)
	}
	if err := static.Check(path); err != nil {
		return nil, fmt.Errorf("the built-in random bot must run in any image: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	entry := randombot.Prefix + game.Name()
	return &submission.Bot{Name: "random", SHA256: submission.Sum(data), Source: "built in",
		Program: sandbox.Program{Name: "random", Entry: entry, Files: []sandbox.File{{Name: entry, Data: data, Mode: 0o755}}}}, nil
}
