package tiles

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Follow implements rules.Follower: a tiles bot cannot be handed the position
// in one question, so the built-in bot follows the dialogue as a participant's
// bot would. Both greetings are read, whatever opts says.
func (Game) Follow(map[string]string) (rules.Listener, error) {
	return &follower{active: -1, at: -1}, nil
}

// follower is what one bot knows from the lines it is sent and the answers it
// gave: the board's size, its cell, its own chains and the opponent tiles it
// knows. It offers only answers the referee accepts whatever the bot does not
// know: moves within the board, and LAY only on a cell that is neither its own
// tile nor an opponent tile it knows.
type follower struct {
	n      int
	at     int // this bot's cell, or -1 before the opening says it
	chains [][]int
	active int // index in chains, or -1
	known  map[int]bool
	// greeting is how many opening lines are read so far; amplifiers how many
	// amplifier cells are still to come, destroyed how many DESTROYED cells.
	greeting, amplifiers, destroyed int
	started                         bool
}

// Hear implements rules.Listener.
func (l *follower) Hear(line string) ([]string, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, fmt.Errorf("an empty line")
	}
	switch {
	case l.amplifiers > 0:
		l.amplifiers--
		return nil, nil
	case l.destroyed > 0:
		l.destroyed--
		p, err := l.cell(f)
		if err == nil {
			delete(l.known, p)
		}
		return nil, err
	case !l.started:
		return nil, l.opening(f)
	}
	switch f[0] {
	case "TURN":
		return l.answers(), nil
	case "LAID":
		l.lay()
	case "TILE":
		l.known[l.at] = true
	case "TERMINATED":
		l.active = -1
	case "DESTROYED":
		if len(f) != 2 {
			return nil, fmt.Errorf("%q: want DESTROYED L", line)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: want DESTROYED L", line)
		}
		l.destroyed = n
	case "UPDATE":
		if len(f) != 4 {
			return nil, fmt.Errorf("%q: want UPDATE TILE|DESTROYED r c", line)
		}
		p, err := l.cell(f[2:])
		if err != nil {
			return nil, err
		}
		switch f[1] {
		case "TILE":
			l.known[p] = true
		case "DESTROYED":
			l.lose(p)
		default:
			return nil, fmt.Errorf("%q: want UPDATE TILE|DESTROYED r c", line)
		}
	case "EMPTY", "HINT", "FAILED", "TURNOVER", "GAMEOVER":
	default:
		return nil, fmt.Errorf("unexpected line %q", line)
	}
	return nil, nil
}

// opening reads the greeting: START, SIZE n (or n alone), the start cell,
// AMPLIFIERS L and L cells, then LAID (and TERMINATED, read as a reply).
func (l *follower) opening(f []string) error {
	switch {
	case f[0] == "START" && l.greeting == 0:
		return nil
	case l.n == 0:
		if f[0] == "SIZE" && len(f) == 2 {
			f = f[1:]
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || len(f) != 1 || n < MinSize || n > MaxSize {
			return fmt.Errorf("opening: want the board's size, got %q", strings.Join(f, " "))
		}
		l.n, l.known = n, map[int]bool{}
	case l.at < 0:
		p, err := l.cell(f)
		if err != nil {
			return err
		}
		l.at = p
	case f[0] == "AMPLIFIERS" && len(f) == 2:
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return fmt.Errorf("opening: %q", strings.Join(f, " "))
		}
		l.amplifiers = n
	case f[0] == "LAID":
		l.started = true
		l.lay()
	default:
		return fmt.Errorf("opening: unexpected %q", strings.Join(f, " "))
	}
	l.greeting++
	return nil
}

// Said implements rules.Listener: it follows the bot's own answer.
func (l *follower) Said(answer string) {
	m, err := ParseMove([]byte(answer))
	if err != nil || m.Kind != Commands {
		return
	}
	if m.Terminate {
		l.active = -1
	}
	if m.Teleport {
		for _, ch := range l.chains {
			if slices.Contains(ch, l.at) && m.Index >= 1 && m.Index <= len(ch) {
				l.at = ch[m.Index-1]
				break
			}
		}
	}
	if m.Dir != 0 {
		if p := l.step(l.at, m.Dir); p >= 0 {
			l.at = p
		}
	}
}

func (l *follower) cell(f []string) (int, error) {
	if len(f) != 2 {
		return 0, fmt.Errorf("want a cell r c, got %q", strings.Join(f, " "))
	}
	r, err1 := strconv.Atoi(f[0])
	c, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || r < 1 || c < 1 || r > l.n || c > l.n {
		return 0, fmt.Errorf("want a cell r c of the board, got %q", strings.Join(f, " "))
	}
	return (r-1)*l.n + c - 1, nil
}

// step is the cell one step from p in direction d, or -1 off the board.
func (l *follower) step(p int, d byte) int { return stepOn(l.n, p, d) }

// lay records a tile laid on the bot's cell: it extends the active chain when
// it touches that chain's last tile, else it starts a new chain.
func (l *follower) lay() {
	if a := l.active; a >= 0 {
		last := l.chains[a][len(l.chains[a])-1]
		if l.step(last, 'U') == l.at || l.step(last, 'D') == l.at || l.step(last, 'L') == l.at || l.step(last, 'R') == l.at {
			l.chains[a] = append(l.chains[a], l.at)
			return
		}
	}
	l.chains = append(l.chains, []int{l.at})
	l.active = len(l.chains) - 1
}

// lose removes the bot's chain whose tail is p.
func (l *follower) lose(p int) {
	for i, ch := range l.chains {
		if len(ch) > 0 && ch[0] == p {
			l.chains[i] = nil
			if l.active == i {
				l.active = -1
			}
			return
		}
	}
}

func (l *follower) own(p int) bool {
	for _, ch := range l.chains {
		if slices.Contains(ch, p) {
			return true
		}
	}
	return false
}

// answers lists the lines the bot may send on its turn, each one valid.
func (l *follower) answers() []string {
	free := func(p int) bool { return !l.own(p) && !l.known[p] }
	var out []string
	if free(l.at) {
		out = append(out, "LAY")
	}
	for _, d := range []byte("UDLR") {
		p := l.step(l.at, d)
		if p < 0 {
			continue
		}
		out = append(out, "MOVE "+string(d))
		if free(p) {
			out = append(out, "MOVE "+string(d)+" LAY")
		}
	}
	return out
}
