package tiles

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/arenabots/arena/rules"
)

// Options are the rule choices.
type Options struct {
	// Size is the board's n when the map is generated (default 12).
	Size int
	// Terminators and Amplifiers are how many of each a generated map holds
	// (defaults 10 and 6).
	Terminators, Amplifiers int
	// Turns is how many turns the game lasts, both bots' counted (default 210).
	Turns int
	// K: before turn t, when t > 0 and t mod K = 0, each bot is told of the
	// opponent tiles it does not know (default 10).
	K int
	// TurnTimeout is the time for one answer (default 2s); the harness
	// applies it.
	TurnTimeout time.Duration
	// Greeting is the opening's form: "engine" (the reference engine's START,
	// SIZE n, ...) or "seed" (the bot interface's n, ...).
	Greeting string
	// Map is the terrain; nil generates it from the seed.
	Map *Map
	// AmplifierEndsChain makes laying on an amplifier end the chain, as the
	// event's rules document says and its engine does not (default false).
	AmplifierEndsChain bool
}

// The greetings.
const (
	GreetingEngine = "engine"
	GreetingSeed   = "seed"
)

// The rule options' bounds.
const (
	maxTurns = 100000
	maxTiles = MaxSize * MaxSize
)

// options is every rule option, stated once.
var options = rules.OptionTable[Options]{Game: "tiles", Specs: []rules.OptionSpec[Options]{
	{Name: "size", Default: "12", Kind: rules.Int(MinSize, MaxSize),
		Field: func(o *Options) any { return &o.Size },
		Doc:   "the board is size x size on a generated map (a map file sets its own: size, terminators and amplifiers are then not used)"},
	{Name: "terminators", Default: "10", Kind: rules.Int(0, maxTiles),
		Field: func(o *Options) any { return &o.Terminators },
		Doc:   "hidden chain-terminating tiles on a generated map"},
	{Name: "amplifiers", Default: "6", Kind: rules.Int(0, maxTiles),
		Field: func(o *Options) any { return &o.Amplifiers },
		Doc:   "visible chain amplifiers on a generated map"},
	{Name: "turns", Default: "210", Kind: rules.Int(1, maxTurns),
		Field: func(o *Options) any { return &o.Turns },
		Doc:   "the game's length in turns, both bots' counted (the reference engine used 150)"},
	{Name: "k", Default: "10", Kind: rules.Int(1, maxTurns),
		Field: func(o *Options) any { return &o.K },
		Doc:   "before every k-th turn each bot is told of the opponent tiles it does not know"},
	{Name: "turnTimeout", Default: "2s", Kind: rules.Duration(),
		Field: func(o *Options) any { return &o.TurnTimeout },
		Doc:   "the time for one answer"},
	{Name: "greeting", Default: GreetingEngine, Kind: rules.OneOf(GreetingEngine, GreetingSeed),
		Field: func(o *Options) any { return &o.Greeting },
		Doc:   "the opening: the reference engine's (START, SIZE n, ...) or the bot interface's (n, ...)"},
	{Name: "map", Default: "", Kind: mapKind,
		Field: func(o *Options) any { return &o.Map },
		Doc:   "the map, in the reference engine's CSV (header row, then rows of E, T, A; --rule map=@FILE reads a file); empty: generated from the seed"},
	{Name: "amplifierEndsChain", Default: "false", Kind: rules.Bool(),
		Field: func(o *Options) any { return &o.AmplifierEndsChain },
		Doc:   "laying a tile on an amplifier ends the chain"},
}}

// mapKind is the map option's: the CSV text itself (the command line reads
// @FILE, not the rules), empty for a map generated from the seed.
var mapKind = rules.NewKind("CSV text", parseMapOption, formatMapOption, "E")

func parseMapOption(csv string) (*Map, error) {
	if csv == "" {
		return nil, nil
	}
	m, err := ParseMap(csv)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

func formatMapOption(m *Map) string {
	if m == nil {
		return ""
	}
	return m.CSV()
}

// DefaultOptions are the rulings' defaults.
func DefaultOptions() Options { return options.Defaults() }

// check refuses values out of bounds and impossible combinations.
func (o Options) check() error {
	if err := options.Check(o); err != nil {
		return err
	}
	if o.Map != nil {
		if o.Map.N < MinSize || o.Map.N > MaxSize || len(o.Map.Cells) != o.Map.N*o.Map.N {
			return fmt.Errorf("map: want a square of %d to %d rows", MinSize, MaxSize)
		}
		return nil
	}
	if o.Terminators+o.Amplifiers > o.Size*o.Size-2 {
		return fmt.Errorf("terminators %d and amplifiers %d do not fit on a %dx%d board beside the two start cells (at most %d in all)",
			o.Terminators, o.Amplifiers, o.Size, o.Size, o.Size*o.Size-2)
	}
	return nil
}

// ParseOptions reads rule options over the defaults.
func ParseOptions(m map[string]string) (Options, error) {
	o, err := options.Parse(m)
	if err != nil {
		return o, err
	}
	return o, o.check()
}

// newRNG is the game's random source: the start cells, then the map.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x711e5)) }

// Game is Prince Rupert's Tiles as a rules.Game.
type Game struct{}

func init() { rules.Register(Game{}) }

// Name implements rules.Game.
func (Game) Name() string { return options.Game }

// Title implements rules.Game.
func (Game) Title() string { return "Prince Rupert's Tiles (chain tiles, line protocol)" }

// Options implements rules.Game.
func (Game) Options() []rules.Option { return options.Options() }

// OptionTable implements rules.OptionTabler.
func (Game) OptionTable() rules.OptionSet { return options }

// New implements rules.Game.
func (Game) New(opts map[string]string, seed uint64) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewState(o, seed)
}

// FromView implements rules.Game. A tiles bot's position is everything it
// was told since the start, not one line, so it cannot be rebuilt.
func (Game) FromView(map[string]string, []byte) (rules.State, error) {
	return nil, errors.New("tiles bots cannot be rebuilt from one line: the position is what the bot was told since the start")
}

// LegalJSON implements rules.Lister.
func (s *State) LegalJSON() ([]byte, error) { return rules.MovesJSON(s) }

// Protocol implements rules.Game.
func (Game) Protocol() rules.Protocol {
	return rules.Protocol{Lines: &rules.LineProtocol{
		MoveTime:       DefaultOptions().TurnTimeout,
		MoveTimeOption: "turnTimeout",
		LateMove:       "forfeit",
		Codec:          Codec{},
	}}
}

// Codec writes the lines of tiles (rules.LineCodec). Its methods only read
// the state.
type Codec struct{}

// Start is the opening of each side: with greeting=engine START, SIZE n, the
// start cell, AMPLIFIERS L and the L cells in reading order, LAID (the first
// tile, laid automatically), and TERMINATED when that ended the chain (a
// terminator, or an amplifier under amplifierEndsChain: only with a map
// file, as a generated map leaves the start cells empty); with greeting=seed the same without START, with n alone
// instead of SIZE n.
func (Codec) Start(st rules.State) [2][]string {
	var out [2][]string
	s, ok := st.(*State)
	if !ok {
		return out
	}
	for _, side := range rules.Sides {
		var l []string
		if s.opts.Greeting == GreetingSeed {
			l = append(l, fmt.Sprint(s.n))
		} else {
			l = append(l, "START", fmt.Sprintf("SIZE %d", s.n))
		}
		l = append(l, s.cellName(s.starts[side]), fmt.Sprintf("AMPLIFIERS %d", len(s.amps)))
		for _, a := range s.amps {
			l = append(l, s.cellName(a))
		}
		l = append(l, "LAID")
		if s.startEnded[side] {
			l = append(l, "TERMINATED")
		}
		out[side] = l
	}
	return out
}

// Request is TURN, after the UPDATE TILE lines due before this turn (each
// side's, in reading order).
func (Codec) Request(st rules.State, _ string, _ rules.Clock) ([2][]string, string) {
	var before [2][]string
	if s, ok := st.(*State); ok {
		before = [2][]string{slices.Clone(s.updates[0]), slices.Clone(s.updates[1])}
	}
	return before, "TURN"
}

// Reply is the mover's replies to the move played (its own line, or the one
// played for it under the random-move fault policy) then TURNOVER, and
// UPDATE DESTROYED to the other side when one of its chains was destroyed.
// When the move was not played (a fault that ended the game) nothing is sent.
func (Codec) Reply(st rules.State, mover rules.Side, _ bool, _ rules.Clock) [2][]string {
	var out [2][]string
	s, ok := st.(*State)
	if !ok || s.turn == 0 || s.mover != mover {
		return out
	}
	out[mover] = append(slices.Clone(s.out[mover]), "TURNOVER")
	out[mover.Other()] = slices.Clone(s.out[mover.Other()])
	return out
}

// End is GAMEOVER to both sides.
func (Codec) End(rules.State) [2][]string { return [2][]string{{"GAMEOVER"}, {"GAMEOVER"}} }
