package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Private are the fields of a record that are a bot's own and not the
// game's: what it printed besides its moves, the files it kept, where its
// submission came from and its file names. A player's copy of a game leaves
// them out for the other side (Redact).
var (
	privateTurn = []string{"stderrTail", "stdoutTail", "early", "late", "dataFiles", "gameDir"}
	privateBot  = []string{"source", "entry"}
)

// Public is t without its side's own output (the fields Redact leaves out
// of the other side's turns): what anyone may see of the turn.
func (t Turn) Public() Turn {
	t.StderrTail, t.StdoutTail, t.Early, t.Late, t.DataFiles, t.GameDir = "", "", "", "", nil, nil
	return t
}

// Reproduced is what of the turn a game played again must reproduce: its public
// part (Public) without what the host measured of it (its times, memory and
// output sizes), which differ from one run to the next.
func (t Turn) Reproduced() Turn {
	t = t.Public()
	t.WallMs, t.HostWaitMs, t.HarnessMs, t.CPUMs, t.PeakMemory, t.StdoutBytes, t.StderrBytes = 0, 0, 0, 0, 0, 0, 0
	return t
}

// Redacted marks a record some fields of which were left out of a player's
// copy: the fields, and the hash of the line as recorded, which the next
// line's prev names, so that the chain can still be followed from line to
// line.
type Redacted struct {
	Fields []string `json:"fields"`
	Hash   string   `json:"lineHash"`
}

// Redact is a copy of a transcript for the player of side keep ("white" or
// "black"): the other side's private fields (its stderr and stdout tails,
// what it wrote out of turn, its data files and game directory, its source
// and entry point's names) are left out, and each line that lost some says
// which under "redacted", with the hash of the line as recorded. Its hash
// chain no longer holds where a line was changed (the organizer's file
// does): the lines left whole, the order, the links and the signed footer
// (when it lost nothing) can be checked against the hashes given.
//
// A keep that is neither side leaves out both sides' own fields.
func Redact(lines []Line, keep string) ([]byte, error) {
	var out bytes.Buffer
	for i, l := range lines {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(l.Raw, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		var cut []string
		switch l.Type {
		case TypeHeader:
			for _, other := range []string{WinnerWhite, WinnerBlack} {
				var bot map[string]json.RawMessage
				if other == keep || json.Unmarshal(rec[other], &bot) != nil {
					continue
				}
				n := len(cut)
				for _, f := range privateBot {
					if _, ok := bot[f]; ok {
						delete(bot, f)
						cut = append(cut, other+"."+f)
					}
				}
				if len(cut) > n {
					data, err := json.Marshal(bot)
					if err != nil {
						return nil, err
					}
					rec[other] = data
				}
			}
		case TypeTurn:
			var side string
			if json.Unmarshal(rec["side"], &side) == nil && side != keep {
				for _, f := range privateTurn {
					if _, ok := rec[f]; ok {
						delete(rec, f)
						cut = append(cut, f)
					}
				}
			}
		case TypeFooter:
			var sessions []map[string]json.RawMessage
			if raw, ok := rec["sessions"]; ok && json.Unmarshal(raw, &sessions) == nil {
				for _, s := range sessions {
					var side string
					if json.Unmarshal(s["side"], &side) == nil && side != keep {
						if _, ok := s["stderrTail"]; ok {
							delete(s, "stderrTail")
							cut = append(cut, "sessions."+side+".stderrTail")
						}
					}
				}
				if len(cut) > 0 {
					data, err := json.Marshal(sessions)
					if err != nil {
						return nil, err
					}
					rec["sessions"] = data
				}
			}
		}
		if len(cut) == 0 {
			out.Write(l.Raw)
			out.WriteByte('\n')
			continue
		}
		mark, err := json.Marshal(Redacted{Fields: cut, Hash: l.Hash})
		if err != nil {
			return nil, err
		}
		rec["redacted"] = mark
		data, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		out.Write(data)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// Unredacted are the lines of a redacted copy (Redact) with the hash each
// had as recorded (Unredact). VerifyChain then checks the copy's order
// and links; whole says which lines are as recorded, whose content the
// chain does check.
func Unredacted(lines []Line) (out []Line, whole []bool, err error) {
	out = make([]Line, len(lines))
	whole = make([]bool, len(lines))
	for i, l := range lines {
		if out[i], whole[i], err = Unredact(l); err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return out, whole, nil
}

// Unredact is a line of a redacted copy (Redact) with the hash it had as
// recorded: a line that lost fields has the hash its "redacted" mark
// gives (which the next line's prev names), another its own. whole says
// the line is as recorded.
func Unredact(l Line) (out Line, whole bool, err error) {
	var mark struct {
		Redacted *Redacted `json:"redacted"`
	}
	if err := json.Unmarshal(l.Raw, &mark); err != nil {
		return l, false, err
	}
	if mark.Redacted == nil {
		return l, true, nil
	}
	if len(mark.Redacted.Hash) != 64 {
		return l, false, fmt.Errorf("its redacted mark's hash %q", mark.Redacted.Hash)
	}
	l.Hash = mark.Redacted.Hash
	return l, false, nil
}
