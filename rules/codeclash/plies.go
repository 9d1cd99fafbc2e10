package codeclash

// PlyLimitOption implements rules.PlyLimited.
func (Game) PlyLimitOption() string { return "maxPlies" }
