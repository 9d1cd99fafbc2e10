package rules

// Scorer is implemented by states of games decided on points: Points is each
// side's score as it stands, White first.
type Scorer interface {
	Points() [2]int
}
