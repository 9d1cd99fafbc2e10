package rules

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
)

// Opening is a position a game can start from: the rule options that start
// it there, and how it is known.
type Opening struct {
	Name  string            `json:"name"`
	Rules map[string]string `json:"rules"`
}

// Opener is a game whose games can start from an opening other than its
// own start. Games whose start comes from the seed (a setup, a map) have
// none: a pair of their games shares the seed instead.
type Opener interface {
	// Openings reads an openings file, in the formats the game documents
	// (FEN or EPD lines, PGN games, move sequences), games given as moves
	// cut after plies half-moves (0: all of them). Every opening is
	// checked by starting a game from it; a bad one is an error naming
	// its line.
	Openings(text []byte, plies int) ([]Opening, error)
	// Deck is a set of openings built into the game ("acf3"); ok is false
	// when it has none of that name.
	Deck(name string) (deck []Opening, ok bool)
}

// Notator is a game whose moves have a notation that game viewers and
// databases read (chess: SAN; checkers: numbered squares).
type Notator interface {
	// Notation writes m, a legal move in before, in that notation.
	Notation(before State, m Move) string
}

// Orders of an openings file.
const (
	Sequential = "sequential"
	Random     = "random"
)

// LoadOpenings reads the openings a tournament or a duel plays: spec is a
// deck of the game's or a file; order random shuffles them with seed (the
// same seed, the same order). The openings' rules are checked over opts.
func LoadOpenings(g Game, spec string, plies int, order string, seed uint64, opts map[string]string) ([]Opening, error) {
	op, ok := g.(Opener)
	if !ok {
		return nil, fmt.Errorf("%s has no openings: its games start from the seed, and a pair of games shares it", g.Name())
	}
	if plies < 0 {
		return nil, fmt.Errorf("opening plies: want 0 or more, got %d", plies)
	}
	if order != Sequential && order != Random {
		return nil, fmt.Errorf("opening order: want %s or %s, got %q", Sequential, Random, order)
	}
	list, ok := op.Deck(spec)
	if !ok {
		text, err := os.ReadFile(spec)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("openings %q: no such file, nor a deck of %s", spec, g.Name())
		}
		if err != nil {
			return nil, fmt.Errorf("openings: %w", err)
		}
		if list, err = op.Openings(text, plies); err != nil {
			return nil, fmt.Errorf("openings %s: %w", spec, err)
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("openings %s: none found", spec)
	}
	for _, o := range list {
		merged := map[string]string{}
		for k, v := range opts {
			merged[k] = v
		}
		for k, v := range o.Rules {
			merged[k] = v
		}
		if _, err := g.New(merged, 1); err != nil {
			return nil, fmt.Errorf("opening %s: %w", o.Name, err)
		}
	}
	list = append([]Opening(nil), list...) // a deck is shared
	if order == Random {
		r := rand.New(rand.NewPCG(seed, 0x6f70656e696e6773)) // "openings"
		r.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	}
	return list, nil
}

// OpeningLines are a text's lines that carry an opening: trimmed, without
// blank lines and comments (from # to the end of a line), each with its
// 1-based line number.
func OpeningLines(text []byte) (lines []string, numbers []int) {
	for i, l := range strings.Split(string(text), "\n") {
		if k := strings.IndexByte(l, '#'); k >= 0 {
			l = l[:k]
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
			numbers = append(numbers, i+1)
		}
	}
	return lines, numbers
}
