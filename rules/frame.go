package rules

// Frame is a picture of a position for the match viewer: the board as one
// viewer sees it, and the facts worth showing beside it.
type Frame struct {
	// Cells holds rows of squares: "" empty, a piece letter (upper case for the
	// first player, lower case for the second), or "?" for a square hidden from
	// the viewer.
	Cells   [][]string `json:"cells"`
	Blocked [][2]int   `json:"blocked,omitempty"`
	// Shielded is a square that cannot be captured this turn.
	Shielded *[2]int `json:"shielded,omitempty"`
	// Notes are short facts: abilities left, fog in effect.
	Notes []string `json:"notes,omitempty"`
}

// Framer is implemented by states the viewer can draw. viewer is the side whose
// view to draw, or NoSide for the true position.
type Framer interface {
	Frame(viewer Side) Frame
}
