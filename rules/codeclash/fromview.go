package codeclash

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/arenabots/arena/rules"
)

// FromView rebuilds the position a state.json describes, for the player it was
// written to. A view does not hold everything, so:
//   - a fogged square ({"type": "F"}) is taken to be empty;
//   - the opponent's remaining abilities are taken to be all unused;
//   - the pawns' squares at the end of setup are unknown (pawnReset is judged
//     legal or not without them; it is never applied to a rebuilt state);
//   - during setup, the placement is inferred from setupStep and the player's
//     pieces on the board.
//
// Every problem names the field it was found in.
func FromView(opts Options, data []byte) (*State, error) {
	v, err := decodeView(data)
	if err != nil {
		return nil, err
	}
	s := NewState(opts, 0)
	switch v.PlayerColor {
	case "white":
		s.toMove = rules.White
	case "black":
		s.toMove = rules.Black
	default:
		return nil, fmt.Errorf(`state.json: playerColor must be "white" or "black", got %q`, v.PlayerColor)
	}
	me := s.toMove
	if v.Phase != "setup" && v.Phase != "play" {
		return nil, fmt.Errorf(`state.json: phase must be "setup" or "play", got %q`, v.Phase)
	}
	if err := s.readBoard(v.Board, v.Phase); err != nil {
		return nil, err
	}
	if err := s.readRemaining(me, v.AbilitiesRemaining); err != nil {
		return nil, err
	}
	for i, raw := range v.Blocked {
		q, err := parseCoord(raw, fmt.Sprintf("blockedTiles[%d]", i))
		if err != nil {
			return nil, fmt.Errorf("state.json: %v", err)
		}
		s.blocked = append(s.blocked, q)
	}
	if err := s.readActivated(me, v.AbilitiesActivated); err != nil {
		return nil, err
	}

	if v.Phase == "play" {
		if err := s.readTurn(me, v.TurnNumber); err != nil {
			return nil, err
		}
		return s, nil
	}
	if err := s.readSetupStep(me, v.SetupStep); err != nil {
		return nil, err
	}
	return s, nil
}

// view is a state.json's fields as they were written, before they are
// checked.
type view struct {
	Phase              string
	PlayerColor        string
	Board              [][]json.RawMessage
	AbilitiesRemaining map[string]json.RawMessage
	AbilitiesActivated []activatedView
	TurnNumber         int
	SetupStep          int
	Blocked            []json.RawMessage
}

// activatedView is one of a view's abilitiesActivated.
type activatedView struct {
	Name      string
	TurnsLeft int
	Target    json.RawMessage
}

// decodeView reads a state.json's fields, each of the right type; only
// setupStep, abilitiesActivated and blockedTiles may be missing.
func decodeView(data []byte) (view, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	top, err := decodeObject(data, "state.json")
	if err != nil {
		return view{}, err
	}
	var v view
	fields := []struct {
		name string
		dst  any
	}{
		{"phase", &v.Phase}, {"playerColor", &v.PlayerColor}, {"board", &v.Board},
		{"abilitiesRemaining", &v.AbilitiesRemaining}, {"abilitiesActivated", &v.AbilitiesActivated},
		{"turnNumber", &v.TurnNumber}, {"setupStep", &v.SetupStep}, {"blockedTiles", &v.Blocked},
	}
	for _, f := range fields {
		raw, ok := top[f.name]
		if !ok {
			if f.name == "setupStep" || f.name == "abilitiesActivated" || f.name == "blockedTiles" {
				continue
			}
			return view{}, fmt.Errorf("state.json: %s is missing", f.name)
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return view{}, fmt.Errorf("state.json: %s has the wrong type: %s", f.name, short(raw))
		}
	}
	return v, nil
}

// readBoard puts the view's pieces on s's board: 5 rows of 5 squares,
// each null, a piece or (in play only) fog, which is taken to be empty.
func (s *State) readBoard(board [][]json.RawMessage, phase string) error {
	if len(board) != Size {
		return fmt.Errorf("state.json: board must have 5 rows, has %d", len(board))
	}
	for r, row := range board {
		if len(row) != Size {
			return fmt.Errorf("state.json: board[%d] must have 5 squares, has %d", r, len(row))
		}
		for c, raw := range row {
			if isNull(raw) {
				continue
			}
			var cell struct{ Type, Color string }
			if err := json.Unmarshal(raw, &cell); err != nil {
				return fmt.Errorf("state.json: board[%d][%d] must be null or {\"type\", \"color\"}, got %s", r, c, short(raw))
			}
			if cell.Type == "F" && cell.Color == "fog" {
				if phase != "play" {
					return fmt.Errorf("state.json: board[%d][%d] is fogged during setup", r, c)
				}
				continue
			}
			k := Kind(0)
			if len(cell.Type) == 1 {
				k = Kind(cell.Type[0])
			}
			if k != King && k != Queen && k != Rook && k != Bishop && k != Pawn {
				return fmt.Errorf("state.json: board[%d][%d].type must be K, Q, R, B, P or F, got %q", r, c, cell.Type)
			}
			side, err := rules.ParseSide(cell.Color)
			if err != nil || (cell.Color != "white" && cell.Color != "black") {
				return fmt.Errorf("state.json: board[%d][%d].color must be white or black, got %q", r, c, cell.Color)
			}
			s.board[r][c] = Piece{Kind: k, Side: side}
		}
	}
	return nil
}

// readRemaining sets which of its abilities the player me has left: every
// one must be named, true or false.
func (s *State) readRemaining(me rules.Side, remaining map[string]json.RawMessage) error {
	for _, name := range abilityNames {
		raw, ok := remaining[name]
		if !ok {
			return fmt.Errorf("state.json: abilitiesRemaining.%s is missing", name)
		}
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("state.json: abilitiesRemaining.%s must be true or false, got %s", name, short(raw))
		}
		s.remaining[me][name] = b
	}
	return nil
}

// readActivated applies the abilities the player me has activated, in the
// order they were: fog's turns left, shield's square, pawnReset seen.
func (s *State) readActivated(me rules.Side, activated []activatedView) error {
	for i, a := range activated {
		switch a.Name {
		case Fog:
			if a.TurnsLeft < 1 || a.TurnsLeft > 3 {
				return fmt.Errorf("state.json: abilitiesActivated[%d].turnsLeft of fog must be 1-3, got %d", i, a.TurnsLeft)
			}
			s.fogLeft[me] = a.TurnsLeft
		case Shield:
			if len(a.Target) == 0 || isNull(a.Target) {
				return fmt.Errorf("state.json: abilitiesActivated[%d].target of shield is missing", i)
			}
			q, err := parseCoord(a.Target, fmt.Sprintf("abilitiesActivated[%d].target", i))
			if err != nil {
				return fmt.Errorf("state.json: %v", err)
			}
			s.shieldOn, s.shieldSq, s.shieldAgainst = true, q, me
		case PawnReset:
			s.resetSeen[me] = true
		default:
			return fmt.Errorf("state.json: abilitiesActivated[%d].name must be fog, shield or pawnReset, got %q", i, a.Name)
		}
		s.activatedAt[me][a.Name] = i
	}
	return nil
}

// readTurn sets a position in play at turnNumber, which must be the
// player me's turn; a game already past MaxPlies is given one more.
func (s *State) readTurn(me rules.Side, turnNumber int) error {
	if turnNumber < 1 {
		return fmt.Errorf("state.json: turnNumber must be at least 1 in play, got %d", turnNumber)
	}
	if (turnNumber%2 == 1) != (me == rules.White) {
		return fmt.Errorf("state.json: turnNumber %d is %s's turn, but playerColor is %s", turnNumber, map[bool]string{true: "white", false: "black"}[turnNumber%2 == 1], me)
	}
	s.setupIdx = SetupTurns
	s.plies = turnNumber - 1
	if s.plies >= s.opts.MaxPlies {
		s.opts.MaxPlies = s.plies + 1
	}
	return nil
}

// readSetupStep infers which of the 18 placements of setup this is from
// setupStep and the player me's pieces already on the board.
func (s *State) readSetupStep(me rules.Side, setupStep int) error {
	var idx int
	switch setupStep {
	case 1:
		idx = 0
		if s.count(me, King) != 0 {
			return fmt.Errorf("state.json: setupStep is 1 but %s's king is already on the board", me)
		}
	case 2:
		idx = 2
		if n := len(s.blocked); n > 1 || (me == rules.White && n != 0) {
			return fmt.Errorf("state.json: setupStep 2 for %s with %d blocked tiles already", me, n)
		}
	case 3:
		n := s.count(me, Rook)
		if n > 1 {
			return fmt.Errorf("state.json: setupStep is 3 but %s has both rooks already", me)
		}
		idx = 4 + 2*n
	case 4:
		n := s.count(me, Bishop) + s.count(me, Pawn)
		if n > 4 || s.count(me, Bishop) > maxBishops || s.count(me, Pawn) > maxPawns {
			return fmt.Errorf("state.json: setupStep is 4 but %s has placed all its bishops and pawns", me)
		}
		idx = 8 + 2*n
	default:
		return fmt.Errorf("state.json: setupStep must be 1-4 during setup, got %d", setupStep)
	}
	s.setupIdx = idx + int(me)
	return nil
}
