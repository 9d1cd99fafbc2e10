package codeclash

import "github.com/arenabots/arena/rules"

// Advice implements rules.Advisor.
func (Game) Advice(v rules.Verdict) string {
	switch v {
	case rules.IllegalMove:
		return "check the move against `arena rules legal STATE.json`"
	case rules.BotRejectedState:
		return "read every state the guide describes (fogged squares, abilities, setup steps)"
	}
	return ""
}
