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
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	top, err := decodeObject(data, "state.json")
	if err != nil {
		return nil, err
	}
	var v struct {
		Phase              string
		PlayerColor        string
		Board              [][]json.RawMessage
		AbilitiesRemaining map[string]json.RawMessage
		AbilitiesActivated []struct {
			Name      string
			TurnsLeft int
			Target    json.RawMessage
		}
		TurnNumber int
		SetupStep  int
		Blocked    []json.RawMessage
	}
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
			return nil, fmt.Errorf("state.json: %s is missing", f.name)
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return nil, fmt.Errorf("state.json: %s has the wrong type: %s", f.name, short(raw))
		}
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
	if len(v.Board) != Size {
		return nil, fmt.Errorf("state.json: board must have 5 rows, has %d", len(v.Board))
	}
	for r, row := range v.Board {
		if len(row) != Size {
			return nil, fmt.Errorf("state.json: board[%d] must have 5 squares, has %d", r, len(row))
		}
		for c, raw := range row {
			if isNull(raw) {
				continue
			}
			var cell struct{ Type, Color string }
			if err := json.Unmarshal(raw, &cell); err != nil {
				return nil, fmt.Errorf("state.json: board[%d][%d] must be null or {\"type\", \"color\"}, got %s", r, c, short(raw))
			}
			if cell.Type == "F" && cell.Color == "fog" {
				if v.Phase != "play" {
					return nil, fmt.Errorf("state.json: board[%d][%d] is fogged during setup", r, c)
				}
				continue
			}
			k := Kind(0)
			if len(cell.Type) == 1 {
				k = Kind(cell.Type[0])
			}
			if k != King && k != Queen && k != Rook && k != Bishop && k != Pawn {
				return nil, fmt.Errorf("state.json: board[%d][%d].type must be K, Q, R, B, P or F, got %q", r, c, cell.Type)
			}
			side, err := rules.ParseSide(cell.Color)
			if err != nil || (cell.Color != "white" && cell.Color != "black") {
				return nil, fmt.Errorf("state.json: board[%d][%d].color must be white or black, got %q", r, c, cell.Color)
			}
			s.board[r][c] = Piece{Kind: k, Side: side}
		}
	}
	for _, name := range abilityNames {
		raw, ok := v.AbilitiesRemaining[name]
		if !ok {
			return nil, fmt.Errorf("state.json: abilitiesRemaining.%s is missing", name)
		}
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("state.json: abilitiesRemaining.%s must be true or false, got %s", name, short(raw))
		}
		s.remaining[me][name] = b
	}
	for i, raw := range v.Blocked {
		q, err := parseCoord(raw, fmt.Sprintf("blockedTiles[%d]", i))
		if err != nil {
			return nil, fmt.Errorf("state.json: %v", err)
		}
		s.blocked = append(s.blocked, q)
	}
	for i, a := range v.AbilitiesActivated {
		switch a.Name {
		case Fog:
			if a.TurnsLeft < 1 || a.TurnsLeft > 3 {
				return nil, fmt.Errorf("state.json: abilitiesActivated[%d].turnsLeft of fog must be 1-3, got %d", i, a.TurnsLeft)
			}
			s.fogLeft[me] = a.TurnsLeft
		case Shield:
			if len(a.Target) == 0 || isNull(a.Target) {
				return nil, fmt.Errorf("state.json: abilitiesActivated[%d].target of shield is missing", i)
			}
			q, err := parseCoord(a.Target, fmt.Sprintf("abilitiesActivated[%d].target", i))
			if err != nil {
				return nil, fmt.Errorf("state.json: %v", err)
			}
			s.shieldOn, s.shieldSq, s.shieldAgainst = true, q, me
		case PawnReset:
			s.resetSeen[me] = true
		default:
			return nil, fmt.Errorf("state.json: abilitiesActivated[%d].name must be fog, shield or pawnReset, got %q", i, a.Name)
		}
		s.activatedAt[me][a.Name] = i
	}

	if v.Phase == "play" {
		if v.TurnNumber < 1 {
			return nil, fmt.Errorf("state.json: turnNumber must be at least 1 in play, got %d", v.TurnNumber)
		}
		if (v.TurnNumber%2 == 1) != (me == rules.White) {
			return nil, fmt.Errorf("state.json: turnNumber %d is %s's turn, but playerColor is %s", v.TurnNumber, map[bool]string{true: "white", false: "black"}[v.TurnNumber%2 == 1], me)
		}
		s.setupIdx = SetupTurns
		s.plies = v.TurnNumber - 1
		if s.plies >= s.opts.MaxPlies {
			s.opts.MaxPlies = s.plies + 1
		}
		return s, nil
	}

	// Setup: which of the 18 placements is this?
	var idx int
	switch v.SetupStep {
	case 1:
		idx = 0
		if s.count(me, King) != 0 {
			return nil, fmt.Errorf("state.json: setupStep is 1 but %s's king is already on the board", me)
		}
	case 2:
		idx = 2
		if n := len(s.blocked); n > 1 || (me == rules.White && n != 0) {
			return nil, fmt.Errorf("state.json: setupStep 2 for %s with %d blocked tiles already", me, n)
		}
	case 3:
		n := s.count(me, Rook)
		if n > 1 {
			return nil, fmt.Errorf("state.json: setupStep is 3 but %s has both rooks already", me)
		}
		idx = 4 + 2*n
	case 4:
		n := s.count(me, Bishop) + s.count(me, Pawn)
		if n > 4 || s.count(me, Bishop) > maxBishops || s.count(me, Pawn) > maxPawns {
			return nil, fmt.Errorf("state.json: setupStep is 4 but %s has placed all its bishops and pawns", me)
		}
		idx = 8 + 2*n
	default:
		return nil, fmt.Errorf("state.json: setupStep must be 1-4 during setup, got %d", v.SetupStep)
	}
	s.setupIdx = idx + int(me)
	return s, nil
}
