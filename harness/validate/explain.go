package validate

import (
	"fmt"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/rules"
)

// failure states a faulty turn for the report: its verdict and reason, or,
// when the turn's exit code and stderr say more than the verdict does (a
// crash the rules read as a claim, referee.ExplainExit), what they say; and
// the fix.
func failure(g rules.Game, v rules.Verdict, reason string, exitCode int, stderr string) (detail, fix string) {
	if e, ok := referee.ExplainExit(g.Protocol().Files, v, exitCode, stderr); ok {
		return e.Detail, e.Fix
	}
	return fmt.Sprintf("%s: %s", v, reason), fixFor(g, v)
}
