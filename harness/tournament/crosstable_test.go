package tournament

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arenabots/arena/harness/transcript"
)

// A pair that played 12 games fills a cell with 12 results: every line of
// the crosstable still keeps its columns where the header puts them.
func TestCrosstableColumnsLineUp(t *testing.T) {
	t.Parallel()
	s := &State{Summary: Summary{Standings: []Row{
		{Rank: 1, Bot: 0, Name: "a-rather-long-team-name-beyond-twenty", Points: 19},
		{Rank: 2, Bot: 1, Name: "teamB", Points: 10},
		{Rank: 3, Bot: 2, Name: "c", Points: 4},
	}}}
	winners := []string{transcript.WinnerWhite, transcript.WinnerBlack, transcript.WinnerDraw}
	id := 0
	for i := range 12 {
		id++
		s.Games = append(s.Games, Record{Game: Game{ID: id, White: i % 2, Black: 1 - i%2}, Status: Done, Winner: winners[i%3]})
	}
	id++
	s.Games = append(s.Games, Record{Game: Game{ID: id, White: 0, Black: 2}, Status: Done, Winner: transcript.WinnerWhite})
	text := s.Crosstable()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")[2:] // the legend and a blank line first
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), text)
	}
	// Every column ends where the header's does.
	ends := columnEnds(lines[0])
	if len(ends) != 4 { // three bots and POINTS
		t.Fatalf("header %q", lines[0])
	}
	for _, l := range lines[1:] {
		got := columnEnds(l)
		got = got[len(got)-len(ends):] // rank and name come first
		for k := range ends {
			if got[k] != ends[k] {
				t.Fatalf("column %d ends at %d, the header's at %d:\n%s", k+1, got[k], ends[k], text)
			}
		}
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
			t.Fatalf("lines of different widths:\n%s", text)
		}
	}
	for _, cell := range []string{"11=00=11=00=", "00=11=00=11="} {
		if !strings.Contains(text, cell) {
			t.Errorf("no cell %q:\n%s", cell, text)
		}
	}
}

// columnEnds is where each run of non-spaces ends in a line.
func columnEnds(line string) []int {
	var ends []int
	r := []rune(line)
	for i := range r {
		if r[i] != ' ' && (i+1 == len(r) || r[i+1] == ' ') {
			ends = append(ends, i)
		}
	}
	return ends
}

func TestStandingsColumnsLineUpWithLongNames(t *testing.T) {
	t.Parallel()
	text := String([]Row{{Rank: 1, Name: "a-rather-long-team-name-beyond-twenty-four", Games: 12, Points: 19, BuchholzCut1: 31, Buchholz: 41, SB: 51},
		{Rank: 2, Name: "b", Games: 12, Points: 4, BuchholzCut1: 31, Buchholz: 41, SB: 51}}, SwissTieBreaks())
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	// A Swiss table shows the tie-breaks it sorts by, in their order.
	for head, value := range map[string]string{"GAMES": "12", "BH-1": "31", " BH ": "41", "SB": "51"} {
		col := strings.Index(lines[0], head) + len(strings.TrimRight(head, " "))
		if col < len(head) {
			t.Fatalf("no %s column:\n%s", head, text)
		}
		for _, l := range lines[1:] {
			if l[col-2:col] != value {
				t.Fatalf("%s is not in its column:\n%s", head, text)
			}
		}
	}
	if !(strings.Index(lines[0], "BH-1") < strings.Index(lines[0], " BH ") && strings.Index(lines[0], " BH ") < strings.Index(lines[0], "SB")) {
		t.Errorf("the tie-breaks' columns are not in the order they apply:\n%s", lines[0])
	}
	if text := String([]Row{{Rank: 1, Name: "a"}}, DefaultTieBreaks()); strings.Contains(text, "BH") || !strings.Contains(text, "SB") {
		t.Errorf("a round robin's table:\n%s", text)
	}
}
