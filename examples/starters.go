// Package examples holds the example bots; this file offers those that an
// event hands its teams as starters: each passes its game's validation as
// it is, with its README, and is served zipped by the event's site (arena
// serve, "How to submit"). It must never offer a starter that does not
// pass: a test validates each as downloaded.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed python javascript c cpp java checkers tiles chess acm6x6
var starters embed.FS

// Starter is an example bot a team can start from: its language, and its
// files.
type Starter struct {
	// Name names it in its download (NAME.zip).
	Name string
	// Language is its language, as a team reads it.
	Language string
	// Files are its files, at their root.
	Files fs.FS
}

// starterDirs are the starters of each game, by the game's name.
var starterDirs = map[string][]Starter{
	"codeclash": {{Name: "python", Language: "Python 3"}, {Name: "javascript", Language: "JavaScript (Node.js)"},
		{Name: "c", Language: "C (one source file, built by the event)"}, {Name: "cpp", Language: "C++ (one source file, built by the event)"},
		{Name: "java", Language: "Java (one source file, built by the event)"}},
	"checkers": {{Name: "checkers", Language: "Python 3 (a bot class, run by the game's adapter)"}},
	"tiles":    {{Name: "tiles", Language: "Python 3"}},
	"chess":    {{Name: "chess", Language: "Python 3"}},
	"acm6x6":   {{Name: "acm6x6", Language: "Python 3"}},
}

// Starters are the starters offered for game (none for a game without).
func Starters(game string) []Starter {
	var out []Starter
	for _, s := range starterDirs[game] {
		sub, err := fs.Sub(starters, s.Name)
		if err != nil {
			panic(err) // the embedded directories are the map's
		}
		s.Files = sub
		out = append(out, s)
	}
	return out
}
