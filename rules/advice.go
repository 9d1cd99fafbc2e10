package rules

// Advisor is a game that says, in its own words, what a bot author should
// fix when a turn ends in a verdict: which parts of its states a bot must
// read, how its moves are checked. Validation reports it.
type Advisor interface {
	// Advice is the fix for v, or "" to leave it to the generic one.
	Advice(v Verdict) string
}
