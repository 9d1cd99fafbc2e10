package tiles

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The letters of a map's cells.
const (
	Empty      byte = 'E'
	Terminator byte = 'T'
	Amplifier  byte = 'A'
)

// MinSize is the smallest board: the second player's start columns are
// n-2..n.
const MinSize = 3

// MaxSize is the largest board the rule options accept.
const MaxSize = 100

// Map is a board's terrain: N x N letters E, T and A in reading order (row
// 1 first, column 1 first).
type Map struct {
	N     int
	Cells []byte
}

// At is the letter of cell r c (1-based).
func (m Map) At(r, c int) byte { return m.Cells[(r-1)*m.N+c-1] }

// Count is how many cells hold the letter.
func (m Map) Count(letter byte) int { return strings.Count(string(m.Cells), string(letter)) }

// CSV writes the map as the reference engine's map files are written: a
// header row naming the columns 0..N-1, then one row per board row.
func (m Map) CSV() string {
	var b strings.Builder
	for c := range m.N {
		if c > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c))
	}
	b.WriteByte('\n')
	for r := range m.N {
		for c := range m.N {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteByte(m.Cells[r*m.N+c])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseMap reads a map in the reference engine's CSV: a header row (its
// content is not read, but it has one field per column), then N rows of N
// cells, each E, T or A (spaces around a cell are ignored). Lines may end in
// \r\n, and empty lines at the end are ignored. A map that is empty, not
// square, smaller than MinSize or larger than MaxSize, or that holds another
// letter is refused; the error names the 1-based line.
func ParseMap(csv string) (Map, error) {
	lines := strings.Split(csv, "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 2 {
		return Map{}, errors.New("the map is empty: want a header row, then one row of E, T and A per board row")
	}
	n := len(strings.Split(lines[0], ","))
	if n < MinSize || n > MaxSize {
		return Map{}, fmt.Errorf("line 1: the header has %d fields, want one per column, %d to %d", n, MinSize, MaxSize)
	}
	m := Map{N: n, Cells: make([]byte, 0, n*n)}
	for i, line := range lines[1:] {
		ln := i + 2
		if i == n {
			return Map{}, fmt.Errorf("line %d: row %d, but the map has %d columns and must be square", ln, i+1, n)
		}
		if strings.TrimSpace(line) == "" {
			return Map{}, fmt.Errorf("line %d: empty, want %d cells", ln, n)
		}
		cells := strings.Split(line, ",")
		if len(cells) != n {
			return Map{}, fmt.Errorf("line %d: %d cells, want %d", ln, len(cells), n)
		}
		for c, v := range cells {
			v = strings.TrimSpace(v)
			if len(v) != 1 || (v[0] != Empty && v[0] != Terminator && v[0] != Amplifier) {
				return Map{}, fmt.Errorf("line %d: cell %d is %q, want E, T or A", ln, c+1, clip(v))
			}
			m.Cells = append(m.Cells, v[0])
		}
	}
	if rows := len(lines) - 1; rows < n {
		return Map{}, fmt.Errorf("line %d: the map ends after %d rows, want %d (it must be square)", len(lines)+1, rows, n)
	}
	return m, nil
}

// startCells draws the start cells: the first player's on a random row and
// one of the columns 1..3, the second player's on a random row and one of the
// columns n-2..n, drawn again while it is the first player's. Cells are
// indexes in reading order.
func startCells(rng *rand.Rand, n int) [2]int {
	r1, c1 := rng.IntN(n), rng.IntN(3)
	for {
		r2, c2 := rng.IntN(n), n-3+rng.IntN(3)
		if r2 != r1 || c2 != c1 {
			return [2]int{r1*n + c1, r2*n + c2}
		}
	}
}

// generate places terminators and amplifiers on distinct random cells, none
// of them a start cell.
func generate(rng *rand.Rand, n, terminators, amplifiers int, starts [2]int) Map {
	m := Map{N: n, Cells: []byte(strings.Repeat(string(Empty), n*n))}
	free := make([]int, 0, n*n)
	for i := range n * n {
		if i != starts[0] && i != starts[1] {
			free = append(free, i)
		}
	}
	k := terminators + amplifiers
	for i := range k {
		j := i + rng.IntN(len(free)-i)
		free[i], free[j] = free[j], free[i]
		if i < terminators {
			m.Cells[free[i]] = Terminator
		} else {
			m.Cells[free[i]] = Amplifier
		}
	}
	return m
}

// stepOn is the cell one step from cell p (an index in reading order) of an
// n x n board in direction d (U, D, L or R), or -1 off the board.
func stepOn(n, p int, d byte) int {
	r, c := p/n, p%n
	switch d {
	case 'U':
		r--
	case 'D':
		r++
	case 'L':
		c--
	case 'R':
		c++
	}
	if r < 0 || c < 0 || r >= n || c >= n {
		return -1
	}
	return r*n + c
}
