package event

import (
	"fmt"
	"math"

	"github.com/arenabots/arena/internal/words"
)

// Capacity is how many validations and how many games (scrimmages and ladder
// pairs) an event's host runs at once.
type Capacity struct {
	Validators int
	Games      int
}

// BotsPerGame is how many bots a game or a validation runs at once: one. Its
// sides take turns (a file game starts one bot a turn; a line game pauses
// the side it is not asking), and a validation plays such games.
const BotsPerGame = 1

// DefaultCapacity shares the host's cores among validations and games so that
// no bot waits for a CPU another bot of the event holds: each runs
// BotsPerGame bots of botCPUs cores. A validation comes first (a team waits
// for its report), then games; each gets at least one slot, so a host
// smaller than two slots is oversubscribed, and Oversubscribed says so.
func DefaultCapacity(cores int, botCPUs float64) Capacity {
	slots := Slots(cores, botCPUs)
	v := max(slots/2, 1)
	return Capacity{Validators: v, Games: max(slots-v, 1)}
}

// Slots is how many validations and games together fit on cores.
func Slots(cores int, botCPUs float64) int {
	if cores < 1 || botCPUs <= 0 {
		return 1
	}
	return int(math.Floor(float64(cores)/(BotsPerGame*botCPUs) + 1e-9))
}

// Oversubscribed says how c asks more of the host's cores than they have,
// or "" when it does not.
func (c Capacity) Oversubscribed(cores int, botCPUs float64) string {
	at := c.Validators + c.Games
	need := float64(at*BotsPerGame) * botCPUs
	if cores < 1 || need <= float64(cores)+1e-9 {
		return ""
	}
	return fmt.Sprintf("%s at once run up to %d bots of %g CPU each (%g cores) on %d cores: "+
		"bots will wait for the CPU (no verdict depends on it, the deadlines move past the wait, but games take longer); "+
		"%s fit", c, at*BotsPerGame, botCPUs, need, cores, DefaultCapacity(cores, botCPUs))
}

// String says c as a person reads it: "1 validation and 2 games".
func (c Capacity) String() string {
	return words.Plural(c.Validators, "validation") + " and " + words.Plural(c.Games, "game")
}
