package services

import (
	"fmt"
	"path/filepath"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/transcript"
)

// Judge is arena replay's verdict of the match in dir, in words, and the
// turn a rerun would start from: side's first fault, else side's last
// turn (the disputing team's own, never its rival's).
func Judge(dir, side string) (string, int) {
	rep, err := replay.File(dir)
	if err != nil {
		return "the transcript cannot be read: " + err.Error(), 0
	}
	if !rep.Consistent {
		return "INCONSISTENT: " + rep.Problem(), 0
	}
	res := rep.Result
	v := fmt.Sprintf("consistent: the rules engine, replaying all %d turns, reaches the recorded result (%s: %s)", rep.Turns, res.Winner, res.Reason)
	if rep.SignedBy != "" {
		v += "; signed by " + rep.SignedBy
	}
	ply := rep.Turns
	if lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName)); err == nil {
		for _, l := range lines {
			var t transcript.Turn
			if l.Type == transcript.TypeTurn && l.Decode(&t) == nil && t.Side == side {
				ply = t.Ply
			}
		}
	}
	for _, f := range res.Faults {
		if f.Side == side {
			ply = f.Ply
			break
		}
	}
	return v, ply
}
