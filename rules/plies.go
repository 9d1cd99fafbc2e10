package rules

// PlyLimited is a game whose length is bounded by a rule option: a command's
// --max-plies, or an event's setting, sets that option.
type PlyLimited interface {
	// PlyLimitOption names the option.
	PlyLimitOption() string
}

// PlyLimitOption names the rule option that bounds g's length, or "" when
// g has none.
func PlyLimitOption(g Game) string {
	if p, ok := g.(PlyLimited); ok {
		return p.PlyLimitOption()
	}
	return ""
}
