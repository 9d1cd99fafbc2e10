// Package games registers every game arena serves. Import it for its side
// effect wherever a game is looked up by name (the CLI, replay, tournaments).
package games

import (
	_ "github.com/arenabots/arena/rules/acm6x6"    // ACM chess 6x6 over stdin/stdout
	_ "github.com/arenabots/arena/rules/checkers"  // English checkers, Python bot classes
	_ "github.com/arenabots/arena/rules/chess"     // standard chess over stdin/stdout
	_ "github.com/arenabots/arena/rules/codeclash" // Code Clash 5x5
	_ "github.com/arenabots/arena/rules/tiles"     // Prince Rupert's Tiles, a dialogue of lines
)
