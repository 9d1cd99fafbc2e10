package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/tiles"
	"github.com/arenabots/arena/sandbox"
)

// The example tiles bots (this one in Go, examples/tiles/random_bot.py in
// Python) play whole games against each other as plain processes, refereed
// by the real referee the way the match runner drives a line game. Every
// answer must be judged valid: a bot that loses track of its chains, its cell
// or the opponent tiles it knows sooner or later lays where it may not.

// answerTime is how long a bot may take to answer; generous for a loaded host.
const answerTime = 10 * time.Second

// exampleBots builds the Go bot into a temporary directory and returns the
// command lines of both example bots by name.
func exampleBots(t *testing.T) map[string][]string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "tiles-random")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bots := map[string][]string{"go": {exe}}
	// The interpreter itself, not a wrapper in PATH (pyenv's shims take
	// longer to start than a whole game takes to play).
	python, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	switch {
	case err == nil:
		bots["python"] = []string{strings.TrimSpace(string(python)), filepath.Join("..", "tiles", "random_bot.py")}
	case os.Getenv("CI") == "true":
		t.Fatalf("python3 is needed to test examples/tiles/random_bot.py: %v", err)
	default:
		t.Logf("no python3 on this host: examples/tiles/random_bot.py is not played (%v)", err)
	}
	return bots
}

// tally counts the messages the games sent and the commands the bots
// answered, to show the test reached everything the bots must keep track of.
type tally struct {
	mu       sync.Mutex
	sent     map[string]int // by first word, "UPDATE TILE" and "UPDATE DESTROYED" apart
	commands map[string]int // by command word
	turns    int
}

func (c *tally) add(sent, answers []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sent == nil {
		c.sent, c.commands = map[string]int{}, map[string]int{}
	}
	for _, l := range sent {
		f := strings.Fields(l)
		if len(f) == 0 || f[0][0] < 'A' || f[0][0] > 'Z' {
			continue // "r c" and the seed greeting's n
		}
		key := f[0]
		if key == "UPDATE" && len(f) > 1 {
			key += " " + f[1]
		}
		c.sent[key]++
	}
	for _, l := range answers {
		for _, w := range strings.Fields(l) {
			if len(w) > 1 && w[0] >= 'A' && w[0] <= 'Z' { // not a direction or an index
				c.commands[w]++
			}
		}
	}
	c.turns += len(answers)
}

func TestExampleBotsPlayOnlyValidLines(t *testing.T) {
	bots := exampleBots(t)
	csv, err := os.ReadFile(filepath.Join("testdata", "terminators.csv"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := 8
	if testing.Short() {
		seeds = 2
	}
	var all tally
	t.Run("games", func(t *testing.T) {
		for _, white := range []string{"go", "python"} {
			for _, black := range []string{"go", "python"} {
				if bots[white] == nil || bots[black] == nil {
					continue
				}
				t.Run(white+" against "+black, func(t *testing.T) {
					t.Parallel()
					for seed := range uint64(seeds) {
						for _, greeting := range []string{tiles.GreetingEngine, tiles.GreetingSeed} {
							for _, opts := range []map[string]string{
								// A generated map; a short k tells the bots of many tiles.
								{"size": fmt.Sprint(5 + seed%8), "terminators": "12", "amplifiers": "4", "k": "4"},
								// Every start cell of the first player, most of the second's, is a terminator.
								{"map": string(csv), "amplifierEndsChain": fmt.Sprint(seed%2 == 1)},
							} {
								opts["greeting"] = greeting
								g := game{seed: seed, opts: opts, bots: [2][]string{bots[white], bots[black]}}
								all.add(g.play(t))
							}
						}
					}
				})
			}
		}
	})
	if t.Failed() {
		return
	}
	// The games must have reached every kind of news a bot must keep, and
	// every command the bots answer with.
	t.Logf("%d turns; messages sent: %v; commands answered: %v", all.turns, all.sent, all.commands)
	for _, want := range []string{"START", "SIZE", "AMPLIFIERS", "LAID", "TERMINATED", "TILE", "UPDATE TILE", "DESTROYED", "UPDATE DESTROYED", "GAMEOVER"} {
		if all.sent[want] == 0 {
			t.Errorf("no game sent %s: the bots' handling of it went untested", want)
		}
	}
	for _, want := range []string{"MOVE", "LAY", "TERMINATE", "TELEPORT", "DESTROY"} {
		if all.commands[want] == 0 {
			t.Errorf("no bot answered with %s: the bots' use of it went untested", want)
		}
	}
}

// game is one game between two bot processes.
type game struct {
	seed uint64
	opts map[string]string
	bots [2][]string // command lines, white first
}

// play referees the game to its end, failing the test at the first answer
// that is not valid, and returns every line the bots were sent and every
// answer.
func (g game) play(t *testing.T) (sent, answers []string) {
	t.Helper()
	name := fmt.Sprintf("seed %d, %s", g.seed, optionNames(g.opts))
	ref, err := referee.New(referee.Config{Game: tiles.Game{}, Rules: g.opts, Seed: g.seed})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var log dialogue
	var bots [2]*player
	for _, side := range rules.Sides {
		if bots[side], err = startPlayer(side, g.bots[side], &log); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer bots[side].kill()
	}
	deliver := func(lines [2][]string) {
		for _, side := range rules.Sides {
			sent = append(sent, lines[side]...)
			if err := bots[side].send(lines[side]...); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, log.tail())
			}
		}
	}
	deliver(ref.Opening())
	for !ref.Over() {
		a, err := ref.Next()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var f referee.Facts
		if !a.Auto {
			deliver(a.Send)
			if f.Exchange, err = bots[a.Side].ask(a.Question); err != nil {
				t.Fatalf("%s, turn %d: %v\n%s%s", name, a.Ply, err, log.tail(), bots[a.Side].stderr())
			}
		}
		step, err := ref.Settle(a, f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if j := step.Judgement; j.Verdict != rules.OK {
			t.Fatalf("%s, turn %d: %s answered %q: %s: %s\n%s%s", name, a.Ply, a.Side, f.Exchange.Line, j.Verdict, j.Reason, log.tail(), bots[a.Side].stderr())
		}
		deliver(step.Send)
		answers = append(answers, f.Exchange.Line)
	}
	// GAMEOVER was the last line: each bot exits on its own, cleanly.
	for _, side := range rules.Sides {
		if err := bots[side].wait(); err != nil {
			t.Fatalf("%s: %s after GAMEOVER: %v%s", name, side, err, bots[side].stderr())
		}
	}
	return sent, answers
}

func optionNames(opts map[string]string) string {
	var parts []string
	for _, k := range []string{"greeting", "size", "terminators", "amplifiers", "k", "amplifierEndsChain"} {
		if v, ok := opts[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	if _, ok := opts["map"]; ok {
		parts = append(parts, "map=testdata/terminators.csv")
	}
	return strings.Join(parts, " ")
}

// dialogue is the end of a game's lines, for failure messages.
type dialogue struct {
	mu    sync.Mutex
	lines []string
}

func (d *dialogue) add(format string, a ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lines = append(d.lines, fmt.Sprintf(format, a...))
	if len(d.lines) > 400 {
		d.lines = d.lines[len(d.lines)-200:]
	}
}

func (d *dialogue) tail() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	from := max(0, len(d.lines)-60)
	return "the dialogue's end ('>' sent, '?' asked, '<' answered):\n" + strings.Join(d.lines[from:], "\n") + "\n"
}

// player is one bot process, spoken to on stdin and heard on stdout.
type player struct {
	side    rules.Side
	cmd     *exec.Cmd
	in      io.WriteCloser
	answers chan string // the bot's output lines; closed when its stdout is
	errs    lockedBuffer
	log     *dialogue
	done    chan error // the process's end, once
}

func startPlayer(side rules.Side, argv []string, log *dialogue) (*player, error) {
	p := &player{side: side, cmd: exec.Command(argv[0], argv[1:]...), answers: make(chan string, 16), log: log}
	p.cmd.Stderr = &p.errs
	// A bot must flush its answers itself, as it must in the sandbox.
	p.cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "PYTHONUNBUFFERED=") })
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv, err)
	}
	p.done = make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.answers <- sc.Text()
		}
		close(p.answers)
		p.done <- p.cmd.Wait() // after stdout is read to its end, as Wait requires
	}()
	return p, nil
}

func (p *player) send(lines ...string) error {
	for _, l := range lines {
		p.log.add("> %s %s", p.side, l)
		if _, err := io.WriteString(p.in, l+"\n"); err != nil {
			return fmt.Errorf("write to %s: %w", p.side, err)
		}
	}
	return nil
}

// ask writes the question and waits for one line. A line the bot wrote
// before it was asked is an error, as the match runner judges it.
func (p *player) ask(question string) (sandbox.Exchange, error) {
	select {
	case early, ok := <-p.answers:
		if ok {
			return sandbox.Exchange{}, fmt.Errorf("%s wrote %q before it was asked", p.side, early)
		}
		return sandbox.Exchange{}, fmt.Errorf("%s closed its output before it was asked", p.side)
	default:
	}
	if err := p.send(question); err != nil {
		return sandbox.Exchange{}, err
	}
	p.log.add("? %s %s", p.side, question)
	start := time.Now()
	select {
	case line, ok := <-p.answers:
		if !ok {
			return sandbox.Exchange{}, fmt.Errorf("%s closed its output instead of answering", p.side)
		}
		p.log.add("< %s %s", p.side, line)
		return sandbox.Exchange{Line: line, Wall: time.Since(start)}, nil
	case <-time.After(answerTime):
		return sandbox.Exchange{}, fmt.Errorf("%s did not answer within %v", p.side, answerTime)
	}
}

// wait expects the bot to exit by itself with status 0, with nothing more
// written on its output.
func (p *player) wait() error {
	p.in.Close()
	timeout := time.After(answerTime)
	for {
		select {
		case extra, ok := <-p.answers:
			if ok {
				return fmt.Errorf("wrote %q without being asked", extra)
			}
		case err := <-p.done:
			p.done <- err
			return err
		case <-timeout:
			return fmt.Errorf("still running %v later", answerTime)
		}
	}
}

// kill ends the process if it is still running and waits for it.
func (p *player) kill() {
	p.in.Close()
	p.cmd.Process.Kill()
	for range p.answers {
	}
	err := <-p.done
	p.done <- err
}

func (p *player) stderr() string {
	p.errs.mu.Lock()
	defer p.errs.mu.Unlock()
	if p.errs.b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("%s's stderr:\n%s", p.side, p.errs.b.String())
}

// lockedBuffer is a process's stderr, read while the process may write it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
