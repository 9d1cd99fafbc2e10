package export

import (
	"testing"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
)

// PGN's Termination says a forfeit (the fault on the turn after the last
// one applied) as a time forfeit or a rules infraction; a game whose
// faults were all forgiven with substitute moves ended normally.
func TestTheTerminationTagNamesTheForfeit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		faults []transcript.Fault
		want   string
	}{
		{[]transcript.Fault{{Ply: 21, Side: "black", Verdict: string(rules.Timeout)}}, "time forfeit"},
		{[]transcript.Fault{{Ply: 21, Side: "black", Verdict: string(rules.IllegalMove)}}, "rules infraction"},
		{[]transcript.Fault{{Ply: 20, Side: "white", Verdict: string(rules.Timeout)}}, "normal"},
	} {
		g := &game{result: transcript.Result{Winner: transcript.WinnerWhite, Reason: "checkmate", Turns: 20, Plies: 20, Faults: tc.faults}}
		if got := g.termination(); got != tc.want {
			t.Errorf("faults %+v: termination %q, want %q", tc.faults, got, tc.want)
		}
	}
}
