package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// The host's wait is what the bot could not help: its own quota and its own
// tasks' contention are never credited.
func TestHostWaitCreditsOnlyTheHostsWait(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		b    CPUTimes
		want time.Duration
	}{
		// One task that needed 300 ms of CPU and waited 700 ms for it.
		{"a single task kept waiting", CPUTimes{At: at(1000 * ms), RunDelay: 700 * ms, Usage: 300 * ms}, 700 * ms},
		// A task that slept 2 s waited for nothing.
		{"a sleeper", CPUTimes{At: at(2000 * ms), RunDelay: 1 * ms, Usage: 1 * ms}, 1 * ms},
		// A spinner alone on the machine runs all the time.
		{"a spinner on a quiet host", CPUTimes{At: at(1000 * ms), RunDelay: 2 * ms, Usage: 998 * ms}, 2 * ms},
		// Held back by its own quota: the run delay is all throttling.
		{"its own quota", CPUTimes{At: at(1000 * ms), RunDelay: 500 * ms, Throttled: 500 * ms, Usage: 500 * ms}, 0},
		// Four threads keeping each other waiting on two CPUs: the run delay
		// is large, but the bot's CPUs were never idle.
		{"its own threads", CPUTimes{At: at(1000 * ms), RunDelay: 2000 * ms, Usage: 2000 * ms}, 0},
		// Two threads, one kept waiting while the other ran: no credit, since
		// the bot had a CPU all along.
		{"one thread running", CPUTimes{At: at(1000 * ms), RunDelay: 500 * ms, Usage: 1000 * ms}, 0},
		// Throttled for a while and kept waiting by others for a while.
		{"both", CPUTimes{At: at(1000 * ms), RunDelay: 600 * ms, Throttled: 200 * ms, Usage: 400 * ms}, 400 * ms},
		// Tasks ended between the readings: their delay is gone, never negative.
		{"tasks gone", CPUTimes{At: at(1000 * ms), RunDelay: 0, Usage: 10 * ms}, 0},
	} {
		a := CPUTimes{At: t0}
		if got := HostWait(a, c.b); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMeterReadsCgroupsV1AndV2(t *testing.T) {
	t.Parallel()
	procRoot := t.TempDir()
	for pid, tasks := range map[string]map[string]string{
		"1":  {"1": "5000 999999 3\n"}, // self: left out
		"20": {"20": "100 2000000 4\n", "21": "100 3000000 1\n"},
		"30": {"30": "7 1000000 1\n"},
	} {
		for tid, stat := range tasks {
			d := filepath.Join(procRoot, pid, "task", tid)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "schedstat"), []byte(stat), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v2 := t.TempDir()
	write(filepath.Join(v2, "cgroup.controllers"), "cpu memory pids\n")
	write(filepath.Join(v2, "cpu.stat"), "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 3\nnr_throttled 1\nthrottled_usec 250\n")
	v1 := t.TempDir()
	write(filepath.Join(v1, "cpu", "cpu.stat"), "nr_periods 3\nnr_throttled 1\nthrottled_time 250000\n")
	write(filepath.Join(v1, "cpuacct", "cpuacct.usage"), "1500000\n")
	for name, root := range map[string]string{"v1": v1, "v2": v2} {
		m, err := OpenMeter(root, procRoot, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := m.Read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.RunDelay != 6*time.Millisecond || got.Throttled != 250*time.Microsecond || got.Usage != 1500*time.Microsecond {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if _, err := OpenMeter(t.TempDir(), procRoot, 1); err == nil {
		t.Error("a meter opened with no cgroup files")
	}
	write(filepath.Join(v2, "cpu.stat"), "usage_usec x\n")
	if _, err := OpenMeter(v2, procRoot, 1); err == nil {
		t.Error("a meter opened on a cpu.stat it cannot read")
	}
}

// A group meter counts the tasks of its process group alone, found by the
// group in each process's stat (whose command may hold spaces and
// parentheses), their CPU time as its usage, and nothing throttled.
func TestAGroupMeterReadsItsGroupsTasksAlone(t *testing.T) {
	t.Parallel()
	procRoot := t.TempDir()
	for pid, p := range map[string]struct {
		stat  string
		tasks map[string]string
	}{
		"40": {"40 (bot) S 1 40 40 0 -1", map[string]string{"40": "3000000 2000000 4\n", "41": "1000000 500000 1\n"}},
		"42": {"42 (a) b) (c) R 40 40 40 0", map[string]string{"42": "1000000 1000000 1\n"}},
		"50": {"50 (other) R 1 50 50 0", map[string]string{"50": "9000000 9000000 1\n"}},
		"51": {"51 (40 40 40) R 1 51 51 0", map[string]string{"51": "9000000 9000000 1\n"}},
	} {
		if err := os.MkdirAll(filepath.Join(procRoot, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(procRoot, pid, "stat"), []byte(p.stat+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for tid, stat := range p.tasks {
			d := filepath.Join(procRoot, pid, "task", tid)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "schedstat"), []byte(stat), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := GroupMeter(procRoot, 40).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got.Usage != 5*time.Millisecond || got.RunDelay != 3500*time.Microsecond || got.Throttled != 0 {
		t.Errorf("%+v, want usage 5ms, run delay 3.5ms, none throttled", got)
	}
	if err := os.WriteFile(filepath.Join(procRoot, "50", "stat"), []byte("50 (no group\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := GroupMeter(procRoot, 40).Read(); err == nil {
		t.Error("a stat without its command's end was read")
	}
}

// On this machine's kernel, a spinning bot kept off the CPU by others (two
// spinners a core, in process groups of their own) is given its time limit
// of its own CPU time: the deadline moves past the host's wait, which the
// group meter reports.
func TestAGroupMeteredTurnGetsItsTimeOnABusyHost(t *testing.T) {
	t.Parallel()
	var hogs []*os.Process
	for range 2 * runtime.NumCPU() {
		p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "while :; do :; done"},
			&os.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true}})
		if err != nil {
			t.Fatal(err)
		}
		hogs = append(hogs, p)
	}
	t.Cleanup(func() {
		for _, p := range hogs {
			p.Kill()
			p.Wait()
		}
	})
	limit := 300 * time.Millisecond
	s := shell(t.TempDir(), "while :; do :; done")
	s.Timeout, s.GroupMeter = limit, true
	r, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if r.MeterError != "" {
		t.Fatalf("meter: %s", r.MeterError)
	}
	if !r.TimedOut || r.HostStalled {
		t.Fatalf("timed out %v, stalled %v: %+v", r.TimedOut, r.HostStalled, r)
	}
	if r.HostWait <= 0 || r.CPU < limit*3/4 {
		t.Errorf("a spinner among %d others: %v of CPU in %v, host wait %v", len(hogs), r.CPU, r.Wall, r.HostWait)
	}
	t.Logf("cpu %v, wall %v, host wait %v", r.CPU, r.Wall, r.HostWait)
}

// This machine's own kernel keeps what the meter reads.
func TestSchedstatOfThisProcess(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("/proc/self/schedstat")
	if err != nil {
		t.Fatalf("no per-task schedstat here: %v", err)
	}
	if _, _, err := parseSchedstat(data); err != nil {
		t.Fatal(err)
	}
	if _, _, err := parseSchedstat([]byte("12\n")); err == nil {
		t.Error("a schedstat of one number was read")
	}
}

// A data file restored for a rerun is the bot's, as it was in play; the
// state file stays the sandbox's.
func TestPrepareGivesOwnedFilesToTheBot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("giving a file away needs root")
	}
	dir := t.TempDir()
	owner := &syscall.Credential{Uid: 10001, Gid: 10002}
	err := Prepare(dir, sandbox.Turn{Put: []sandbox.File{
		{Name: "state.json", Data: []byte("{}")},
		{Name: "data.bin", Data: []byte("x"), Mode: 0o600, Owned: true},
		{Name: "other.txt", Data: []byte("y")},
	}}, owner)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][3]uint32{
		"state.json": {0, 0, 0o644}, "data.bin": {10001, 10002, 0o600}, "other.txt": {0, 0, 0o644},
	} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != want[0] || st.Gid != want[1] || uint32(fi.Mode().Perm()) != want[2] {
			t.Errorf("%s: uid %d gid %d mode %v, want %v", name, st.Uid, st.Gid, fi.Mode().Perm(), want)
		}
	}
}

// fakeProc is a /proc holding n bot tasks (and PID 1, the agent), as a
// container's own /proc shows them.
func fakeProc(tb testing.TB, n int) string {
	tb.Helper()
	root := tb.TempDir()
	for i := range n + 1 {
		pid := fmt.Sprint(i + 1)
		d := filepath.Join(root, pid, "task", pid)
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "schedstat"), []byte("123456 7890 12\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// BenchmarkTurn is one turn of /bin/true through Run, without the meter and
// with it (this host's cgroup files, a container's /proc of four tasks): the
// difference is what measuring the host's wait costs a turn.
func BenchmarkTurn(b *testing.B) {
	if _, err := os.Stat("/bin/true"); err != nil {
		b.Skip("no /bin/true")
	}
	m, err := OpenMeter("/sys/fs/cgroup", fakeProc(b, 4), 1)
	if err != nil {
		b.Skipf("no cgroup to measure from: %v", err)
	}
	for _, c := range []struct {
		name  string
		meter *Meter
	}{{"bare", nil}, {"metered", m}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := Run(context.Background(), Spec{Path: "/bin/true", Args: []string{"true"}, Timeout: 5 * time.Second, Meter: c.meter})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

// BenchmarkMeterRead is one reading of the meter, as above.
func BenchmarkMeterRead(b *testing.B) {
	m, err := OpenMeter("/sys/fs/cgroup", fakeProc(b, 4), 1)
	if err != nil {
		b.Skipf("no cgroup to measure from: %v", err)
	}
	for b.Loop() {
		if _, err := m.Read(); err != nil {
			b.Fatal(err)
		}
	}
}
