package rules

// Frame is a picture of a position for the match viewer: the board as one
// viewer sees it, and the facts worth showing beside it.
//
// Coordinates are 0-based [row, column] pairs, row 0 at the top. Cells alone
// draw a board of pieces; the optional layers after Notes are for boards
// whose squares hold more than one piece letter (terrain under a piece, a
// number on it, players walking the board). A layer that is set has Cells'
// shape.
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

	// Owners says whose piece is on each square: 0 the first player, 1 the
	// second, -1 none. With Owners set, a letter of Cells on a square without
	// an owner is ground, not a piece; without it, a letter's case tells the
	// owner.
	Owners [][]int `json:"owners,omitempty"`
	// Ground is what lies on each square under any piece: a short letter
	// (a game's terrain), or "".
	Ground [][]string `json:"ground,omitempty"`
	// Labels is short text shown on a square's piece instead of its letter
	// (a tile's index in its chain), or "".
	Labels [][]string `json:"labels,omitempty"`
	// Rings are squares whose piece is drawn ringed (the first piece of a
	// line of pieces, such as a chain's tail).
	Rings [][2]int `json:"rings,omitempty"`
	// Links join orthogonally neighbouring squares whose pieces belong
	// together (consecutive tiles of a chain); each is drawn as a bar in the
	// colour of the pieces' owner.
	Links [][2][2]int `json:"links,omitempty"`
	// Players are the squares the players themselves stand on, for games
	// whose players walk the board. A player the viewer cannot see is left
	// out.
	Players []Player `json:"players,omitempty"`
	// Base is the number the game gives its first row and column (0 or 1);
	// the viewer numbers squares from it.
	Base int `json:"base,omitempty"`
	// Legend explains the ground letters, labels and marks of the layers
	// above, one short line each.
	Legend []string `json:"legend,omitempty"`
}

// Player is where one player stands on the board.
type Player struct {
	Side string `json:"side"` // "white" or "black", as Side.String writes them
	At   [2]int `json:"at"`
}

// Framer is implemented by states the viewer can draw. viewer is the side whose
// view to draw, or NoSide for the true position.
type Framer interface {
	Frame(viewer Side) Frame
}
