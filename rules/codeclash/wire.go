package codeclash

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arenabots/arena/rules"
)

// MaxMoveBytes is the largest move.json accepted.
const MaxMoveBytes = 64 * 1024

type cellJSON struct {
	Type  string `json:"type"`
	Color string `json:"color"`
}

type activatedJSON struct {
	Name      string  `json:"name"`
	TurnsLeft int     `json:"turnsLeft"`
	Target    *[2]int `json:"target"`
}

type remainingJSON struct {
	Fog       bool `json:"fog"`
	PawnReset bool `json:"pawnReset"`
	Shield    bool `json:"shield"`
}

// viewJSON is state.json. Field order is the guide's and is part of the format:
// the same state always renders to the same bytes.
type viewJSON struct {
	Phase              string                `json:"phase"`
	PlayerColor        string                `json:"playerColor"`
	Board              [Size][Size]*cellJSON `json:"board"`
	AbilitiesRemaining remainingJSON         `json:"abilitiesRemaining"`
	AbilitiesActivated []activatedJSON       `json:"abilitiesActivated"`
	TurnNumber         int                   `json:"turnNumber"`
	SetupStep          int                   `json:"setupStep"`
	BlockedTiles       [][2]int              `json:"blockedTiles"`
}

var fogCell = &cellJSON{Type: "F", Color: "fog"}

// View implements rules.State: state.json as side receives it.
func (s *State) View(side rules.Side) ([]byte, error) {
	v := viewJSON{
		Phase:       s.Phase(),
		PlayerColor: side.String(),
		SetupStep:   s.SetupStep(),
		AbilitiesRemaining: remainingJSON{
			Fog:       s.remaining[side][Fog],
			PawnReset: s.remaining[side][PawnReset],
			Shield:    s.remaining[side][Shield],
		},
		AbilitiesActivated: s.activated(side),
		BlockedTiles:       [][2]int{},
	}
	v.TurnNumber = s.TurnNumber()
	fogged := s.Phase() == "play" && s.fogLeft[side] > 0
	var vis [Size][Size]bool
	if fogged {
		vis = s.visible(side)
	}
	for r := range Size {
		for c := range Size {
			if fogged && !vis[r][c] {
				v.Board[r][c] = fogCell
				continue
			}
			if p := s.board[r][c]; !p.empty() {
				v.Board[r][c] = &cellJSON{Type: string(p.Kind), Color: p.Side.String()}
			}
		}
	}
	blocked := slices.Clone(s.blocked)
	slices.SortFunc(blocked, func(a, b Square) int { return a.index() - b.index() })
	for _, q := range blocked {
		v.BlockedTiles = append(v.BlockedTiles, [2]int{int(q.R), int(q.C)})
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// activated lists the abilities the opponent activated against side that are in
// effect on side's next turn, in the order they were activated.
func (s *State) activated(side rules.Side) []activatedJSON {
	out := []activatedJSON{}
	if s.fogLeft[side] > 0 {
		out = append(out, activatedJSON{Name: Fog, TurnsLeft: s.fogLeft[side]})
	}
	if s.shieldOn && s.shieldAgainst == side {
		out = append(out, activatedJSON{Name: Shield, TurnsLeft: 1, Target: &[2]int{int(s.shieldSq.R), int(s.shieldSq.C)}})
	}
	if s.resetSeen[side] {
		out = append(out, activatedJSON{Name: PawnReset, TurnsLeft: 0})
	}
	at := s.activatedAt[side]
	slices.SortStableFunc(out, func(a, b activatedJSON) int { return at[a.Name] - at[b.Name] })
	return out
}

// EncodeMove implements rules.State: move.json as a bot following the guide
// writes it.
func (s *State) EncodeMove(mv rules.Move) []byte {
	m, _ := mv.(Move)
	var b bytes.Buffer
	b.WriteString(`{"move":{`)
	switch {
	case m.Setup && (m.Place == Bishop || m.Place == Pawn):
		fmt.Fprintf(&b, `"from":%s,`, coordJSON(typeCode(m.Place)))
	case !m.Setup:
		fmt.Fprintf(&b, `"from":%s,`, coordJSON(m.From))
	}
	fmt.Fprintf(&b, `"to":%s}`, coordJSON(m.To))
	if m.Ability != "" {
		target := "null"
		if m.Target != nil {
			target = coordJSON(*m.Target)
		}
		name, _ := json.Marshal(m.Ability)
		fmt.Fprintf(&b, `,"ability":{"name":%s,"target":%s}`, name, target)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// MoveObject is the "move" object of move.json for m, as `arena rules legal`
// lists it.
func MoveObject(m Move) map[string]any {
	o := map[string]any{"to": [2]int{int(m.To.R), int(m.To.C)}}
	switch {
	case m.Setup && (m.Place == Bishop || m.Place == Pawn):
		c := typeCode(m.Place)
		o["from"] = [2]int{int(c.R), int(c.C)}
	case !m.Setup:
		o["from"] = [2]int{int(m.From.R), int(m.From.C)}
	}
	return o
}

func coordJSON(q Square) string { return fmt.Sprintf("[%d,%d]", q.R, q.C) }

// ParseMove implements rules.State. It accepts what a reasonable reading of the
// guide allows: a BOM, any whitespace, unknown fields, "from" in any form during
// setup steps 1-3, and "ability" absent, null, {} or {"name": null}.
func (s *State) ParseMove(data []byte) (rules.Move, error) {
	return parseMove(data, s.Phase() == "setup", s.SetupStep())
}

func parseMove(data []byte, setup bool, step int) (Move, error) {
	var m Move
	if len(data) > MaxMoveBytes {
		return m, rules.Formatf("move.json is %d bytes; the limit is %d", len(data), MaxMoveBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return m, rules.Formatf("move.json is not valid UTF-8")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return m, rules.Formatf("move.json is empty")
	}
	top, err := decodeObject(data, "move.json")
	if err != nil {
		return m, err
	}
	rawMove, ok := top["move"]
	if !ok || isNull(rawMove) {
		return m, rules.Formatf(`move.json has no "move" object`)
	}
	mv, err := decodeObject(rawMove, "move")
	if err != nil {
		return m, err
	}
	rawTo, ok := mv["to"]
	if !ok || isNull(rawTo) {
		return m, rules.Formatf(`move has no "to"`)
	}
	if m.To, err = parseCoord(rawTo, "move.to"); err != nil {
		return m, err
	}
	rawFrom, hasFrom := mv["from"]
	hasFrom = hasFrom && !isNull(rawFrom)
	switch {
	case setup && step == 4:
		m.Setup = true
		if !hasFrom {
			return m, rules.Illegalf("setup step 4 needs from: [0,3] for a bishop or [0,4] for a pawn")
		}
		code, err := parseCoord(rawFrom, "move.from")
		if err != nil {
			return m, err
		}
		m.Place = typeCodes[code]
		if m.Place != Bishop && m.Place != Pawn {
			return m, rules.Illegalf("setup step 4 needs from [0,3] (bishop) or [0,4] (pawn), got %v", code)
		}
	case setup:
		m.Setup = true
		m.Place = map[int]Kind{1: King, 2: None, 3: Rook}[step]
	default:
		if !hasFrom {
			return m, rules.Formatf(`move has no "from"`)
		}
		if m.From, err = parseCoord(rawFrom, "move.from"); err != nil {
			return m, err
		}
	}
	rawAb, ok := top["ability"]
	if !ok || isNull(rawAb) {
		return m, nil
	}
	ab, err := decodeObject(rawAb, "ability")
	if err != nil {
		return m, err
	}
	rawName, ok := ab["name"]
	if !ok || isNull(rawName) {
		return m, nil
	}
	var name string
	if err := json.Unmarshal(rawName, &name); err != nil {
		return m, rules.Formatf("ability.name must be a string or null, got %s", short(rawName))
	}
	if name == "" {
		return m, rules.Illegalf(`unknown ability "" (fog, pawnReset or shield)`)
	}
	m.Ability = name
	if name == Shield {
		if rawT, ok := ab["target"]; ok && !isNull(rawT) {
			t, err := parseCoord(rawT, "ability.target")
			if err != nil {
				return m, err
			}
			m.Target = &t
		}
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// decodeObject reads one JSON object and nothing after it.
func decodeObject(data []byte, what string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, rules.Formatf("%s must be a JSON object, got %s", what, short(data))
		}
		return nil, rules.Formatf("%s is not valid JSON: %v", what, err)
	}
	if obj == nil {
		return nil, rules.Formatf("%s must be a JSON object, got null", what)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, rules.Formatf("%s has data after its JSON object", what)
	}
	return obj, nil
}

// parseCoord reads [row, col] with JSON integers 0-4.
func parseCoord(raw json.RawMessage, field string) (Square, error) {
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil || len(arr) != 2 {
		return Square{}, rules.Formatf("%s must be [row, col], got %s", field, short(raw))
	}
	var v [2]int
	for i, x := range arr {
		t := strings.TrimSpace(string(x))
		n, err := strconv.Atoi(t)
		if err != nil {
			if t == "-0" {
				n, err = 0, nil
			} else {
				return Square{}, rules.Formatf("%s must hold integers, got %s", field, short(raw))
			}
		}
		v[i] = n
	}
	if v[0] < 0 || v[0] >= Size || v[1] < 0 || v[1] >= Size {
		return Square{}, rules.Formatf("%s [%d,%d] is off the board (rows and columns are 0-4)", strings.TrimPrefix(field, "move."), v[0], v[1])
	}
	return sq(v[0], v[1]), nil
}

func short(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(bytes.TrimSpace(raw))
	}
	s := b.String()
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// LegalJSON implements rules.Lister: every legal move as move.json's "move"
// object (during setup step 4, "from" is the piece-type code), and the
// abilities the player may add this turn.
func (s *State) LegalJSON() ([]byte, error) {
	moves := []map[string]any{}
	for _, m := range s.Moves() {
		moves = append(moves, MoveObject(m))
	}
	out, err := json.Marshal(struct {
		Moves     []map[string]any `json:"moves"`
		Abilities []string         `json:"abilities"`
	}{moves, s.Abilities()})
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
