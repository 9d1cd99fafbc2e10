package agent

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/proc"
)

// pid1Env names the test a copy of the test binary runs as PID 1.
const pid1Env = "ARENA_AGENT_TEST_AS_PID1"

// asPID1 runs the calling test again as PID 1 of new PID, mount and IPC
// namespaces with a /proc of its own, as the agent runs in its container. It
// returns true in that copy, and false in the test that started it once the
// copy passed. Making the namespaces and running bots as the bot user need
// root.
func asPID1(t *testing.T) bool {
	t.Helper()
	if os.Getenv(pid1Env) == t.Name() && os.Getpid() == 1 {
		ownProc(t)
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs the agent as PID 1 of new namespaces, bots as the bot user")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), pid1Env+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC,
		Pdeathsig:  syscall.SIGKILL,
	}
	out, err := cmd.CombinedOutput()
	var pathErr *os.PathError
	if errors.As(err, &pathErr) || errors.Is(err, syscall.EPERM) {
		t.Skipf("cannot make the namespaces: %v", err)
	}
	if err != nil {
		t.Fatalf("the test as PID 1 failed: %v\n%s", err, out)
	}
	if m := regexp.MustCompile(`--- SKIP.*\n\s*(.*)`).FindSubmatch(out); m != nil {
		t.Skipf("as PID 1: %s", m[1])
	}
	return false
}

// ownProc mounts a /proc of the new PID namespace, so that the agent's pids
// name its own processes, never the host's.
func ownProc(t *testing.T) {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		t.Skipf("cannot make the mounts private: %v", err)
	}
	if err := syscall.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		t.Skipf("cannot mount /proc: %v", err)
	}
}

// testbox is a container's directories on the host.
type testbox struct {
	cfg     Config
	scratch string // the second scratch directory, which the tests break
}

// newTestbox makes the directories and a bot that answers "ok" per turn and
// echoes lines as a session.
func newTestbox(t *testing.T) testbox {
	root, err := os.MkdirTemp("", "agent-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	// The bot user must reach its directories.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Game: filepath.Join(root, "game"), Bot: filepath.Join(root, "bot"),
		Scratch: []string{filepath.Join(root, "tmp"), filepath.Join(root, "shm")},
		UID:     BotUID, GID: BotGID, Env: []string{"PATH=/usr/bin:/bin"}}
	for _, d := range append([]string{cfg.Game, cfg.Bot}, cfg.Scratch...) {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range cfg.Scratch {
		if err := os.Chmod(d, 0o1777); err != nil {
			t.Fatal(err)
		}
	}
	bot := "#!/bin/sh\nif [ \"$1\" = session ]; then while read l; do echo \"got $l\"; done; fi\necho ok > move.json\n"
	if err := os.WriteFile(filepath.Join(cfg.Bot, "bot"), []byte(bot), 0o755); err != nil {
		t.Fatal(err)
	}
	return testbox{cfg: cfg, scratch: cfg.Scratch[1]}
}

// breakScratch puts a file where a scratch directory is, so that it cannot be
// wiped; the returned function puts the directory back.
func (b testbox) breakScratch(t *testing.T) (restore func()) {
	if err := os.RemoveAll(b.scratch); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.scratch, []byte("left by a bot"), 0o666); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(b.scratch); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(b.scratch, 0o1777); err != nil {
			t.Fatal(err)
		}
	}
}

// client speaks to an agent serving in this process.
type client struct {
	enc *gob.Encoder
	dec *gob.Decoder
}

// serve starts the agent on cfg; it says "bye" when the test ends.
func serve(t *testing.T, cfg Config) *client {
	reqR, reqW := io.Pipe()
	repR, repW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(reqR, repW, cfg)
		repW.Close()
	}()
	c := &client{enc: gob.NewEncoder(reqW), dec: gob.NewDecoder(repR)}
	var h Hello
	if err := c.dec.Decode(&h); err != nil || h.Err != "" {
		t.Fatalf("hello: %+v, error %v", h, err)
	}
	t.Cleanup(func() {
		c.call(t, Request{Op: OpBye})
		reqW.Close()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return c
}

// call sends req and returns the reply.
func (c *client) call(t *testing.T, req Request) Reply {
	t.Helper()
	if err := c.enc.Encode(req); err != nil {
		t.Fatalf("%s: send: %v", req.Op, err)
	}
	var rep Reply
	if err := c.dec.Decode(&rep); err != nil {
		t.Fatalf("%s: receive: %v", req.Op, err)
	}
	return rep
}

// turn is one turn of the test bot.
var turn = Request{Op: OpTurn, Exec: "bot", Timeout: 5 * time.Second, Tail: 1024,
	Turn: sandbox.Turn{Remove: []string{"move.json"}, Collect: "move.json", CollectMax: 64}}

// wantErr fails the test unless rep.Err says every one of want.
func wantErr(t *testing.T, what string, rep Reply, want ...string) {
	t.Helper()
	if rep.Err == "" {
		t.Fatalf("%s: no error, want one saying %q", what, want)
	}
	for _, w := range want {
		if !strings.Contains(rep.Err, w) {
			t.Fatalf("%s: got %q, want it to say %q", what, rep.Err, w)
		}
	}
}

func TestAFailedTurnWipeKeepsBotsOutUntilAReset(t *testing.T) {
	if !asPID1(t) {
		return
	}
	b := newTestbox(t)
	c := serve(t, b.cfg)
	if rep := c.call(t, turn); rep.Err != "" || string(rep.Report.Answer.Data) != "ok\n" {
		t.Fatalf("a good turn: answer %q, error %q", rep.Report.Answer.Data, rep.Err)
	}
	restore := b.breakScratch(t)
	wantErr(t, "the turn whose wipe failed", c.call(t, turn), "wipe "+b.scratch)
	wantErr(t, "the next turn", c.call(t, turn), "no bot may run until a reset succeeds", "wipe "+b.scratch)
	wantErr(t, "a session", c.call(t, Request{Op: OpStart, Exec: "bot", Args: []string{"session"}}), "no bot may run")
	wantErr(t, "a reset that cannot wipe", c.call(t, Request{Op: OpReset}), "wipe "+b.scratch)
	wantErr(t, "a turn after the failed reset", c.call(t, turn), "no bot may run")

	restore()
	if rep := c.call(t, Request{Op: OpReset}); rep.Err != "" {
		t.Fatalf("reset: %s", rep.Err)
	}
	if rep := c.call(t, turn); rep.Err != "" || string(rep.Report.Answer.Data) != "ok\n" {
		t.Fatalf("a turn after a good reset: answer %q, error %q", rep.Report.Answer.Data, rep.Err)
	}
}

func TestAFailedSessionWipeIsReportedAndKeepsBotsOut(t *testing.T) {
	if !asPID1(t) {
		return
	}
	b := newTestbox(t)
	c := serve(t, b.cfg)
	if rep := c.call(t, Request{Op: OpStart, Exec: "bot", Args: []string{"session"}, Tail: 1024}); rep.Err != "" || rep.Report.StartError != "" {
		t.Fatalf("start: %+v", rep)
	}
	if rep := c.call(t, Request{Op: OpAsk, Line: "hi", Timeout: 5 * time.Second}); rep.Err != "" || rep.Exchange.Line != "got hi" {
		t.Fatalf("ask: %+v", rep)
	}
	b.breakScratch(t)
	rep := c.call(t, Request{Op: OpStop})
	wantErr(t, "stop", rep, "stop session", "wipe "+b.scratch)
	if rep.Report.ExitCode != -1 {
		t.Errorf("stop: exit %d, want -1 (stopped by us): the report is lost with the error", rep.Report.ExitCode)
	}
	wantErr(t, "a session after the failed wipe", c.call(t, Request{Op: OpStart, Exec: "bot", Args: []string{"session"}}), "no bot may run")
	wantErr(t, "a turn after the failed wipe", c.call(t, turn), "no bot may run")
}

func TestABotThatCannotBeExecutedIsItsOwnFault(t *testing.T) {
	if !asPID1(t) {
		return
	}
	c := serve(t, newTestbox(t).cfg)
	rep := c.call(t, Request{Op: OpStart, Exec: "missing"})
	if rep.Err != "" || !strings.Contains(rep.Report.StartError, "not found") {
		t.Fatalf("start: got error %q, StartError %q; want only a StartError", rep.Err, rep.Report.StartError)
	}
	// Not the agent's failure: the box stays usable.
	if rep := c.call(t, turn); rep.Err != "" {
		t.Fatalf("a turn after it: %s", rep.Err)
	}
}

// A box whose runtime could not copy the bot in gets it with "install": its
// files land root-owned and read-only in an empty bot directory, the bot
// runs under the limits sent with it, and no second install, nor one after
// a bot ran, nor a tar that names anything outside, is taken.
func TestInstallPutsTheProgramInAnEmptyBotDirectory(t *testing.T) {
	if !asPID1(t) {
		return
	}
	b := newTestbox(t)
	if err := os.Remove(filepath.Join(b.cfg.Bot, "bot")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(b.cfg.Bot, 0o777); err != nil { // an emptyDir's mode
		t.Fatal(err)
	}
	c := serve(t, b.cfg)
	prog := sandbox.Program{Name: "p", Entry: "bot", Files: []sandbox.File{
		{Name: "bot", Data: []byte("#!/bin/sh\necho $(ulimit -n) $(grep 'Max processes' /proc/self/limits | tr -s ' ' | cut -d' ' -f3) $(id -u) $(id -g) > move.json\n"), Mode: 0o755},
		{Name: "lib/data.txt", Data: []byte("x")},
	}}
	tarred, err := ProgramTar(prog)
	if err != nil {
		t.Fatal(err)
	}
	limits := []proc.Rlimit{{Resource: syscall.RLIMIT_NOFILE, Value: 37}, {Resource: 6 /* RLIMIT_NPROC */, Value: 77}}
	if rep := c.call(t, Request{Op: OpInstall, Program: tarred, Rlimits: limits, BotID: 123456}); rep.Err != "" {
		t.Fatalf("install: %s", rep.Err)
	}
	for name, want := range map[string]os.FileMode{"": 0o755 | os.ModeDir, "bot": 0o555, "lib": 0o755 | os.ModeDir, "lib/data.txt": 0o444} {
		fi, err := os.Lstat(filepath.Join(b.cfg.Bot, name))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); fi.Mode() != want || st.Uid != 0 {
			t.Errorf("%q: mode %v uid %d, want %v owned by root", name, fi.Mode(), st.Uid, want)
		}
	}
	wantErr(t, "a second install", c.call(t, Request{Op: OpInstall, Program: tarred}), "install")
	if rep := c.call(t, turn); rep.Err != "" || string(rep.Report.Answer.Data) != "37 77 123456 123456\n" {
		t.Fatalf("a turn: answer %q, error %q, want the limits and the user sent", rep.Report.Answer.Data, rep.Err)
	}
	if fi, err := os.Stat(b.cfg.Game); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 123456 {
		t.Errorf("the game directory is not the bot's: %v", err)
	}
	wantErr(t, "an install after a turn", c.call(t, Request{Op: OpInstall, Program: tarred}), "already ran")
}

// A program larger than a part is sent in parts and unpacked as they come:
// nothing else is taken while the install is under way, a part of the
// wrong kind ends it with the reason, and the whole program is in place
// once its last part is answered.
func TestAProgramSentInPartsIsUnpackedAsItComes(t *testing.T) {
	if !asPID1(t) {
		return
	}
	b := newTestbox(t)
	if err := os.Remove(filepath.Join(b.cfg.Bot, "bot")); err != nil {
		t.Fatal(err)
	}
	c := serve(t, b.cfg)
	data := bytes.Repeat([]byte("0123456789abcdef"), (2*InstallPart+InstallPart/3)/16)
	tarred, err := ProgramTar(sandbox.Program{Name: "p", Entry: "bot", Files: []sandbox.File{
		{Name: "bot", Data: []byte("#!/bin/sh\nwc -c < \"$(dirname \"$0\")/data\" > move.json\n"), Mode: 0o755},
		{Name: "data", Data: data},
	}})
	if err != nil {
		t.Fatal(err)
	}
	parts := 0
	for rest := tarred; len(rest) > 0; parts++ {
		n := min(len(rest), InstallPart)
		if rep := c.call(t, Request{Op: OpInstall, Program: rest[:n], More: n < len(rest)}); rep.Err != "" {
			t.Fatalf("install, part %d: %s", parts+1, rep.Err)
		}
		rest = rest[n:]
		if parts == 0 {
			wantErr(t, "a turn amid the install", c.call(t, turn), "being installed")
		}
	}
	if parts < 3 {
		t.Fatalf("the program went in %d parts, want 3 or more", parts)
	}
	got, err := os.ReadFile(filepath.Join(b.cfg.Bot, "data"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the data file: %d bytes (%v), want the %d sent", len(got), err, len(data))
	}
	if rep := c.call(t, turn); rep.Err != "" || strings.TrimSpace(string(rep.Report.Answer.Data)) != strconv.Itoa(len(data)) {
		t.Fatalf("a turn: answer %q, error %q", rep.Report.Answer.Data, rep.Err)
	}

	// In another box, a part that is no tar ends the install at once.
	b2 := newTestbox(t)
	if err := os.Remove(filepath.Join(b2.cfg.Bot, "bot")); err != nil {
		t.Fatal(err)
	}
	c2 := serve(t, b2.cfg)
	junk := bytes.Repeat([]byte("not a tar "), InstallPart/10)
	wantErr(t, "a part that is no tar", c2.call(t, Request{Op: OpInstall, Program: junk, More: true}), "install")
	if rep := c2.call(t, turn); strings.Contains(rep.Err, "being installed") {
		t.Errorf("a failed install is still under way: %s", rep.Err)
	}
}

// The client sends a program in parts of InstallPart bytes at most, the
// limits and the user with the last.
func TestTheClientSendsAProgramInParts(t *testing.T) {
	t.Parallel()
	reqR, reqW := io.Pipe()
	repR, repW := io.Pipe()
	var got []Request
	done := make(chan struct{})
	go func() {
		defer close(done)
		enc, dec := gob.NewEncoder(repW), gob.NewDecoder(reqR)
		if err := enc.Encode(Hello{Version: Version}); err != nil {
			return
		}
		for {
			var req Request
			if err := dec.Decode(&req); err != nil {
				repW.CloseWithError(err)
				return
			}
			got = append(got, req)
			if err := enc.Encode(Reply{}); err != nil {
				return
			}
		}
	}()
	c := &Client{Host: nopHost{}, Name: "test"}
	c.Connect(repR, reqW)
	if err := c.AwaitHello(context.Background(), time.Minute, false); err != nil {
		t.Fatal(err)
	}
	program := bytes.Repeat([]byte{7}, 2*InstallPart+1)
	limits := []proc.Rlimit{{Resource: syscall.RLIMIT_NOFILE, Value: 37}}
	if err := c.Install(context.Background(), program, limits, 123456); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-done
	var sent []byte
	for i, req := range got {
		last := i == len(got)-1
		if req.Op != OpInstall || len(req.Program) > InstallPart || req.More == last || (req.BotID != 0) != last || (len(req.Rlimits) != 0) != last {
			t.Errorf("request %d of %d: %s of %d bytes, more %v, user %d, limits %v", i+1, len(got), req.Op, len(req.Program), req.More, req.BotID, req.Rlimits)
		}
		sent = append(sent, req.Program...)
	}
	if len(got) != 3 || !bytes.Equal(sent, program) {
		t.Errorf("%d requests sent %d bytes, want 3 sending the %d of the program", len(got), len(sent), len(program))
	}
}

// nopHost is a Host with no box behind it.
type nopHost struct{}

func (nopHost) Kill(context.Context)                      {}
func (nopHost) Gone(_ context.Context, what string) error { return errors.New(what) }
func (nopHost) OOMKills() int64                           { return -1 }
func (nopHost) Close(context.Context) error               { return nil }

// unpack takes a ProgramTar's files and directories alone, each at a clean
// path inside, and never replaces what is there.
func TestUnpackRefusesWhatIsNotAPlainFileInside(t *testing.T) {
	t.Parallel()
	tarOf := func(hs ...tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hs {
			if err := tw.WriteHeader(&h); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for name, data := range map[string][]byte{
		"a path outside":  tarOf(tar.Header{Typeflag: tar.TypeReg, Name: "../x", Mode: 0o644}),
		"an absolute one": tarOf(tar.Header{Typeflag: tar.TypeReg, Name: "/etc/x", Mode: 0o644}),
		"a symlink":       tarOf(tar.Header{Typeflag: tar.TypeSymlink, Name: "x", Linkname: "/etc/passwd"}),
		"a device":        tarOf(tar.Header{Typeflag: tar.TypeChar, Name: "x", Devmajor: 1, Devminor: 3}),
		"a file twice":    tarOf(tar.Header{Typeflag: tar.TypeReg, Name: "x", Mode: 0o644}, tar.Header{Typeflag: tar.TypeReg, Name: "x", Mode: 0o644}),
		"not a tar":       []byte("plain text, not a tar archive at all, long enough to be read as a header block................................................................................................................................................................................................................................................................................................................................................................................................................................................................................................"),
	} {
		dir := t.TempDir()
		if err := unpack(dir, bytes.NewReader(data)); err == nil {
			t.Errorf("%s: unpacked", name)
		}
	}
}
