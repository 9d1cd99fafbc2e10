package tournament

import (
	"slices"
	"testing"
)

// The batches a tournament plays one after another: a round robin's
// schedule at once, a Swiss round each, a bracket's rounds (byes left
// out), a stages tournament's qualifier rounds then its second stage.
func TestTheBatchesOfEachFormat(t *testing.T) {
	t.Parallel()
	stages := formatOf(Stages, 10, 2)
	stages.Advance, stages.Then, stages.Rounds = 4, DoubleElimination, 3
	stagesRR := stages
	stagesRR.Then = RoundRobin
	rating := formatOf(Rating, 6, 2)
	rating.Budget = 14
	for _, tc := range []struct {
		c    Config
		want []int
	}{
		{formatOf(RoundRobin, 5, 2), []int{20}},
		{formatOf(Swiss, 7, 2), []int{6, 6, 6, 6, 6}},
		{formatOf(Knockout, 8, 2), []int{8, 4, 2}},
		{formatOf(Knockout, 6, 1), []int{2, 2, 1}},
		{formatOf(DoubleElimination, 4, 1), []int{2, 2, 1, 1}},
		{stages, []int{10, 10, 10, 4, 4, 2, 2}},
		{stagesRR, []int{10, 10, 10, 12}},
		{rating, []int{6, 6, 2}},
	} {
		if got := tc.c.Batches(); !slices.Equal(got, tc.want) {
			t.Errorf("%s of %d: batches %v, want %v", tc.c.Format, len(tc.c.Bots), got, tc.want)
		}
	}
}
