package tournament

import (
	"path/filepath"
	"time"

	"github.com/arenabots/arena/harness/transcript"
)

// Summary is what a run ends with.
type Summary struct {
	Total, Done, Unplayed, Pending int
	Standings                      []Row
	// TieBreaks are the tie-breaks the standings were placed by.
	TieBreaks   []string
	Wall        time.Duration
	GameTime    time.Duration // the played games' durations, summed
	BotTime     time.Duration // inside the bots' processes, summed over all games
	Interrupted bool
	// Warnings are failures of this run that lost nothing a result rests on
	// (a game's viewer page, the progress line, an idle container left for
	// the next start to sweep). Each was also logged.
	Warnings []string
}

// ViewHTML is each game's viewer page in its match directory.
const ViewHTML = "match.html"

// Times are what a game's transcript says of its time.
type Times struct {
	BotMs  float64 // the turns' wall times, summed
	TurnMs float64 // the median turn
	// SlotMs is how long the game held its place among the games played
	// at once here: from its claim to its result stored (its sandboxes
	// set up, the match, its evidence read back, its viewer written). 0
	// for a game a worker played.
	SlotMs float64
}

// Score is the points bot (an index into the bots) scored in the game: 1
// for a win, 0.5 for a draw, 0 for a loss; ok is false for a game not
// played (pending, unplayed) or not its own.
func (r Record) Score(bot int) (points float64, ok bool) {
	if r.Status != Done || bot != r.White && bot != r.Black {
		return 0, false
	}
	switch r.Winner {
	case transcript.WinnerDraw:
		return 0.5, true
	case transcript.WinnerWhite, transcript.WinnerBlack:
		if r.Winner == transcript.WinnerWhite && bot == r.White || r.Winner == transcript.WinnerBlack && bot == r.Black {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// outcomes turns played games into scoring input.
func outcomes(recs []Record) []Outcome {
	var out []Outcome
	for _, r := range recs {
		if r.Status != Done {
			continue
		}
		o := Outcome{White: r.White, Black: r.Black, Winner: -1, Playoff: r.Playoff}
		switch r.Winner {
		case transcript.WinnerWhite:
			o.Winner = r.White
		case transcript.WinnerBlack:
			o.Winner = r.Black
		case transcript.WinnerDraw:
		default:
			continue
		}
		out = append(out, o)
	}
	return out
}

// Machine is what a worker says of the machine it plays on, with each
// result: so that an organizer can show the machines were comparable.
type Machine struct {
	Host    string   `json:"host"`
	CPUs    int      `json:"cpus"`
	Sandbox string   `json:"sandbox"`
	ImageID string   `json:"imageId,omitempty"`
	Engine  string   `json:"engine,omitempty"`
	Bench   []Figure `json:"bench,omitempty"` // doctor --bench's figures
}

// Figure is one measurement of a machine.
type Figure struct {
	Name  string  `json:"name"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
}

// WorkersDir is where a tournament keeps its enrolled workers' keys and its
// certificate authority.
func WorkersDir(dir string) string { return filepath.Join(dir, "workers") }
