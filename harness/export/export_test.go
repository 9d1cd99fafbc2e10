package export

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/checkers"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/local"
)

// play plays one match and returns its directory.
func play(t *testing.T, game string, opts map[string]string, white, black *submission.Bot, backend sandbox.Backend, labels map[string]string) string {
	t.Helper()
	g, err := rules.Lookup(game)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	lim := sandbox.DefaultLimits()
	if _, err := match.Run(context.Background(), match.Config{Game: g, Rules: opts, Seed: 7, White: white, Black: black,
		Backend: backend, Limits: lim, OnFault: match.Forfeit, Dir: dir, Labels: labels,
		Job: &transcript.Job{Game: 3, Attempt: 1, Pair: 2, Opening: "a test position"}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func pgnExtract(t *testing.T) string {
	t.Helper()
	return dockertest.Tool(t, "the PGN export", "pgn-extract", "pgn-extract")
}

// A chess game from an opening, exported as PGN, is read by pgn-extract
// without an error, and every position it replays is the one the
// transcript says the bot was given (the last one, the game's end).
func TestPGNIsReadByPGNExtract(t *testing.T) {
	t.Parallel()
	extract := pgnExtract(t)
	// Black to move after 1. e4 e5 2. Nf3: the export starts "2... ".
	fen := "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
	bot := submissiontest.Fixture(t, "./internal/testbots/linefixture", "legal")
	dir := play(t, "chess", map[string]string{"fen": fen, "maxPlies": "60"}, bot, bot, &local.Backend{Dir: t.TempDir()}, nil)
	var out bytes.Buffer
	if err := Write(context.Background(), &out, dir, PGN); err != nil {
		t.Fatal(err)
	}
	pgn := out.String()
	for _, want := range []string{`[SetUp "1"]`, `[FEN "` + fen + `"]`, `[ArenaPair "2"]`, `[ArenaOpening "a test position"]`, "\n2... ", "{[%clk "} {
		if !strings.Contains(pgn, want) {
			t.Fatalf("no %q in\n%s", want, pgn)
		}
	}
	file := filepath.Join(t.TempDir(), "game.pgn")
	os.WriteFile(file, out.Bytes(), 0o644)
	cmd := exec.Command(extract, "-s", "-Wepd", file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || strings.TrimSpace(stderr.String()) != "" {
		t.Fatalf("pgn-extract: %v\n%s\n%s", err, stderr.String(), pgn)
	}
	var epd []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		epd = append(epd, strings.Join(strings.Fields(l)[:4], " "))
	}
	// The positions the bots were given, from the transcript, then the last.
	var given []string
	lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	var last rules.State
	rep := replay.Lines(lines, dir, func(s replay.State) {
		f := strings.Fields(s.Turn.State)
		given = append(given, strings.Join(f[len(f)-6:len(f)-2], " "))
		last = s.After
	})
	if !rep.Consistent || last == nil {
		t.Fatal(rep.Problem())
	}
	v, _ := last.View(rules.White)
	given = append(given, strings.Join(strings.Fields(string(v))[:4], " "))
	if len(epd) != len(given) {
		t.Fatalf("pgn-extract replays %d positions, the transcript has %d\n%s", len(epd), len(given), pgn)
	}
	for i := range epd {
		if epd[i] != given[i] {
			t.Fatalf("position %d: pgn-extract %q, the transcript %q", i, epd[i], given[i])
		}
	}
}

// A PDN token: a move number, a move, or the result.
var (
	pdnTag    = regexp.MustCompile(`^\[([A-Za-z]+) "((?:[^"\\]|\\.)*)"\]$`)
	pdnNumber = regexp.MustCompile(`^[0-9]+\.(\.\.)?$`)
	pdnMove   = regexp.MustCompile(`^[0-9]{1,2}(-[0-9]{1,2}|(x[0-9]{1,2})+)$`)
)

// parsePDN reads one game strictly: tag pairs, a blank line, numbered
// moves in order, the result; it plays every move from the start the tags
// give and returns the tags and the position it reaches.
func parsePDN(t *testing.T, text string, opts checkers.Options) (map[string]string, *checkers.State) {
	t.Helper()
	head, body, ok := strings.Cut(strings.TrimRight(text, "\n"), "\n\n")
	if !ok {
		t.Fatalf("no blank line between the tags and the moves:\n%s", text)
	}
	tags := map[string]string{}
	for _, l := range strings.Split(head, "\n") {
		m := pdnTag.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a tag pair: %q", l)
		}
		tags[m[1]] = m[2]
	}
	for _, k := range []string{"Event", "Site", "Date", "Round", "White", "Black", "Result", "GameType"} {
		if tags[k] == "" {
			t.Fatalf("no %s tag", k)
		}
	}
	if tags["GameType"] != "21" {
		t.Fatalf("GameType %q", tags["GameType"])
	}
	if tags["FEN"] != "" {
		opts.Start = tags["FEN"]
	}
	s, err := checkers.StartAt(opts)
	if err != nil {
		t.Fatal(err)
	}
	tokens := strings.Fields(body)
	if n := len(tokens); n == 0 || tokens[n-1] != tags["Result"] {
		t.Fatalf("the moves do not end with the result %q", tags["Result"])
	}
	number := 0
	for _, tok := range tokens[:len(tokens)-1] {
		switch {
		case pdnNumber.MatchString(tok):
			n, err := strconv.Atoi(strings.TrimRight(tok, "."))
			if err != nil || n != number+1 {
				t.Fatalf("move number %q after %d", tok, number)
			}
			number = n
		case pdnMove.MatchString(tok):
			if err := s.PlayNotation(tok); err != nil {
				t.Fatalf("%s: %v", tok, err)
			}
		default:
			t.Fatalf("not a PDN token: %q", tok)
		}
	}
	return tags, s
}

// A checkers game from a ballot, exported as PDN, parses strictly, and its
// moves, played from the start, reach the position the game ended in; the
// first player is PDN's Black.
func TestPDNParsesAndReplays(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	g, _ := rules.Lookup("checkers")
	bot := func(name string) *submission.Bot {
		return submissiontest.Example(t, g, "examples/checkers/random_bot.py", name)
	}
	labels := dockertest.Labels(t)
	opts := map[string]string{"menCaptureBackward": "false", "start": "9-13 22-17 13x22"}
	dir := play(t, "checkers", opts, bot("first.py"), bot("second.py"), docker.New(cli, image), labels)
	dockertest.NoLeftovers(t, cli, labels)
	var out bytes.Buffer
	if err := Write(context.Background(), &out, dir, PDN); err != nil {
		t.Fatal(err)
	}
	o := checkers.DefaultOptions()
	o.MenCaptureBackward = false
	tags, s := parsePDN(t, out.String(), o)
	if tags["Black"] != "first" || tags["White"] != "second" || !strings.Contains(out.String(), "1. 9-13 22-17 2. 13x22") {
		t.Fatalf("%v\n%s", tags, out.String())
	}
	lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	var last rules.State
	rep := replay.Lines(lines, dir, func(st replay.State) { last = st.After })
	if !rep.Consistent {
		t.Fatal(rep.Problem())
	}
	want, _ := last.View(rules.White)
	got, _ := s.View(rules.White)
	if !bytes.Equal(want, got) {
		t.Fatalf("the PDN's moves reach\n%s\nthe game ended in\n%s\n%s", got, want, out.String())
	}
	want = map[string][]byte{transcript.WinnerWhite: []byte("0-1"), transcript.WinnerBlack: []byte("1-0"), transcript.WinnerDraw: []byte("1/2-1/2")}[rep.Result.Winner]
	if tags["Result"] != string(want) {
		t.Fatalf("result %s, the game's %s", tags["Result"], rep.Result.Winner)
	}
}

// An edited transcript is not exported, and a game goes to its own format.
func TestOnlyGamesThatReplayAreExported(t *testing.T) {
	t.Parallel()
	bot := submissiontest.Fixture(t, "./internal/testbots/linefixture", "legal")
	dir := play(t, "chess", map[string]string{"maxPlies": "6"}, bot, bot, &local.Backend{Dir: t.TempDir()}, nil)
	if err := Write(context.Background(), &bytes.Buffer{}, dir, PDN); err == nil || !strings.Contains(err.Error(), "exports as PGN") {
		t.Errorf("chess as PDN: %v", err)
	}
	if err := Write(context.Background(), &bytes.Buffer{}, dir, "sgf"); err == nil || !strings.Contains(err.Error(), "want pgn or pdn") {
		t.Errorf("sgf: %v", err)
	}
	file := filepath.Join(dir, transcript.FileName)
	data, _ := os.ReadFile(file)
	os.WriteFile(file, bytes.Replace(data, []byte(`"played":"`), []byte(`"played":"x`), 1), 0o644)
	if err := Write(context.Background(), &bytes.Buffer{}, dir, PGN); err == nil || !strings.Contains(err.Error(), "does not replay") {
		t.Errorf("an edited transcript: %v", err)
	}
}
