package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// A bot's turn is timed on the wall clock, next to it. On a busy host the
// wall clock runs on while the bot's tasks wait for a CPU that others hold:
// that wait is the host's doing, and a turn's deadline is moved past it
// (see Spec.Meter). What counts as the host's wait is measured so that the
// bot cannot make it grow:
//
//   - the run delay: how long the bot's tasks were runnable but not running,
//     from the kernel's per-task schedstat (/proc/PID/task/TID/schedstat,
//     its second field), summed over the bot's live tasks;
//   - less the time its cgroup was held back by its own CPU quota (cpu.stat:
//     throttled_usec on cgroup v2, throttled_time on v1): a bot that wants
//     more CPU than it was given waits for itself;
//   - and never more than the time its cgroup was neither throttled nor
//     running (elapsed - throttled - CPU used, the cgroup's usage_usec on v2,
//     cpuacct.usage on v1): tasks of a bot that keep each other waiting keep
//     its CPUs busy, so a bot can only be credited with time in which it got
//     no CPU at all.
//
// A bot that sleeps is not waiting for a CPU, and a bot that spins runs: both
// use up their time as before.

// CPUTimes are a bot's cumulative CPU facts at one instant, as the kernel
// keeps them.
type CPUTimes struct {
	At        time.Time
	RunDelay  time.Duration // its live tasks' time runnable but not running
	Throttled time.Duration // its cgroup's time held back by its CPU quota
	Usage     time.Duration // its cgroup's CPU time
}

// HostWait is how long, between a and b, the bot was kept off the CPU by
// others: see the rules above. It is never negative.
func HostWait(a, b CPUTimes) time.Duration {
	elapsed := b.At.Sub(a.At)
	throttled := max(b.Throttled-a.Throttled, 0)
	w := b.RunDelay - a.RunDelay - throttled
	idle := elapsed - throttled - max(b.Usage-a.Usage, 0)
	return max(min(w, idle), 0)
}

// A Meter reads a bot's CPUTimes (one reading at a time: it is not safe for
// concurrent use): its cgroup's from the files below root, its
// tasks' from /proc (every process but self: a container's PID 1 watches
// everything else in it).
type Meter struct {
	proc      string // the proc file system, "/proc"
	self      int
	group     int // > 0: only this process group's tasks, and no cgroup (GroupMeter)
	throttled statField
	usage     statField
}

// GroupMeter measures the process group pgid, on a host that gives the bot
// no cgroup of its own (the local backend): its tasks are found in
// procRoot by their process group, its CPU time is theirs (schedstat's
// first field), and nothing throttles it. The same rules hold: a task that
// leaves the group (setsid) is no longer counted, its wait with it.
func GroupMeter(procRoot string, pgid int) *Meter {
	return &Meter{proc: procRoot, self: -1, group: pgid}
}

// statField is one number in a cgroup file: the line starting with key (or
// the file's whole content when key is ""), in units of unit. The file is
// kept open and read from its start each time (a cgroup file's content is
// made at each read).
type statField struct {
	file string
	key  string
	unit time.Duration
	f    *os.File
	buf  []byte
}

func (f *statField) read() (time.Duration, error) {
	if f.f == nil {
		fd, err := os.Open(f.file)
		if err != nil {
			return 0, err
		}
		f.f, f.buf = fd, make([]byte, 4096)
	}
	n, err := f.f.ReadAt(f.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return parseStatField(f.buf[:n], f.key, f.unit)
}

func parseStatField(data []byte, key string, unit time.Duration) (time.Duration, error) {
	for _, line := range strings.Split(string(data), "\n") {
		v := strings.TrimSpace(line)
		if key != "" {
			rest, ok := strings.CutPrefix(line, key+" ")
			if !ok {
				continue
			}
			v = strings.TrimSpace(rest)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		return time.Duration(n) * unit, nil
	}
	return 0, fmt.Errorf("no %q", key)
}

// OpenMeter finds the cgroup files under root (the container's own cgroup,
// "/sys/fs/cgroup"): cgroup v2's unified cpu.stat, else v1's cpu and cpuacct
// controllers. procRoot is the proc file system; self is left out of the
// tasks. It fails when the machine keeps none of what is needed, and the
// bot's deadline is then the wall clock's alone.
func OpenMeter(root, procRoot string, self int) (*Meter, error) {
	m := &Meter{proc: procRoot, self: self}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		stat := filepath.Join(root, "cpu.stat")
		m.throttled = statField{file: stat, key: "throttled_usec", unit: time.Microsecond}
		m.usage = statField{file: stat, key: "usage_usec", unit: time.Microsecond}
	} else {
		cpu := firstDir(root, "cpu", "cpu,cpuacct", "cpuacct,cpu")
		acct := firstDir(root, "cpuacct", "cpu,cpuacct", "cpuacct,cpu")
		if cpu == "" || acct == "" {
			return nil, errors.New("no cgroup v2 cpu.stat and no cgroup v1 cpu and cpuacct controllers under " + root)
		}
		m.throttled = statField{file: filepath.Join(cpu, "cpu.stat"), key: "throttled_time", unit: time.Nanosecond}
		m.usage = statField{file: filepath.Join(acct, "cpuacct.usage"), unit: time.Nanosecond}
	}
	if _, err := m.Read(); err != nil {
		return nil, err
	}
	return m, nil
}

func firstDir(root string, names ...string) string {
	for _, n := range names {
		p := filepath.Join(root, n)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
	}
	return ""
}

// Read takes the bot's CPUTimes now.
func (m *Meter) Read() (CPUTimes, error) {
	if m.group > 0 {
		t := CPUTimes{At: time.Now()}
		var err error
		t.Usage, t.RunDelay, err = m.tasks()
		return t, err
	}
	t, err := m.start()
	if err != nil {
		return t, err
	}
	if t.RunDelay, err = m.runDelay(); err != nil {
		return t, err
	}
	return t, nil
}

// start is Read at a bot's start, when all its tasks are new: their run
// delay is taken as none so far (what they waited since the fork is the
// host's, and counts), which spares reading them.
func (m *Meter) start() (CPUTimes, error) {
	t := CPUTimes{At: time.Now()}
	if m.group > 0 {
		return t, nil // new tasks: no CPU time and no wait so far
	}
	var err error
	if t.Throttled, err = m.throttled.read(); err != nil {
		return t, fmt.Errorf("read %s: %w", m.throttled.file, err)
	}
	if t.Usage, err = m.usage.read(); err != nil {
		return t, fmt.Errorf("read %s: %w", m.usage.file, err)
	}
	return t, nil
}

// waitClock follows the host's wait over one turn or one question, and
// moves its deadline past it. A reading that fails ends the measure: the
// deadline is then the wall clock's. It is not safe for concurrent use.
type waitClock struct {
	meter *Meter // nil: nothing (more) to measure
	base  CPUTimes
	wait  time.Duration // the most the host's wait was read at
	err   error         // the reading that failed
}

// startClock starts following the host's wait with m (nil: none). fresh
// says every task of the bot is new (a turn's process), whose run delay so
// far need not be read.
func startClock(m *Meter, fresh bool) *waitClock {
	c := &waitClock{meter: m}
	if m == nil {
		return c
	}
	read := m.Read
	if fresh {
		read = m.start
	}
	var err error
	if c.base, err = read(); err != nil {
		c.meter, c.err = nil, err
	}
	return c
}

// sample reads the host's wait so far.
func (c *waitClock) sample() time.Duration {
	if c.meter == nil {
		return c.wait
	}
	t, err := c.meter.Read()
	if err != nil {
		c.meter, c.err = nil, err
		return c.wait
	}
	c.wait = max(c.wait, HostWait(c.base, t))
	return c.wait
}

// extend is the deadline's decision when timeout has passed elapsed after
// the start: again > 0 is how much longer the bot may run (the host kept
// it waiting, and sandbox.WallCap is not reached); stalled, that the cap
// came with the bot's own time short of timeout (the host's fault);
// neither, that the bot's time is up.
func (c *waitClock) extend(elapsed, timeout time.Duration) (again time.Duration, stalled bool) {
	if c.meter == nil {
		return 0, false
	}
	own, limit := elapsed-c.sample(), sandbox.WallCap(timeout)
	switch {
	case own >= timeout:
		return 0, false
	case elapsed < limit:
		return max(min(timeout-own, limit-elapsed), minStep), false
	}
	return 0, true
}

// errString says why the measure ended early, or "".
func (c *waitClock) errString() string {
	if c.err == nil {
		return ""
	}
	return c.err.Error()
}

// minStep is the shortest a deadline moved past the host's wait is re-armed
// for: the bot is not woken for less.
const minStep = 2 * time.Millisecond

// runDelay sums the run delay of every task in /proc but self's. A task that
// ends while it is read is skipped.
func (m *Meter) runDelay() (time.Duration, error) {
	_, d, err := m.tasks()
	return d, err
}

// tasks sums the CPU time and the run delay of every task in /proc but
// self's (of the process group's alone, for a GroupMeter). A task that ends
// while it is read is skipped.
func (m *Meter) tasks() (cpu, delay time.Duration, err error) {
	des, err := os.ReadDir(m.proc)
	if err != nil {
		return 0, 0, err
	}
	self := strconv.Itoa(m.self)
	for _, de := range des {
		name := de.Name()
		if name == self || name[0] < '0' || name[0] > '9' {
			continue
		}
		if m.group > 0 {
			stat, err := os.ReadFile(filepath.Join(m.proc, name, "stat"))
			if err != nil {
				continue // ended meanwhile
			}
			if pgrp, err := parsePgrp(stat); err != nil {
				return 0, 0, err
			} else if pgrp != m.group {
				continue
			}
		}
		tasks, err := os.ReadDir(filepath.Join(m.proc, name, "task"))
		if err != nil {
			continue // ended meanwhile
		}
		for _, task := range tasks {
			data, err := os.ReadFile(filepath.Join(m.proc, name, "task", task.Name(), "schedstat"))
			if err != nil {
				continue // ended meanwhile (ENOENT, ESRCH), or not ours to read
			}
			c, d, err := parseSchedstat(data)
			if err != nil {
				return 0, 0, err
			}
			cpu, delay = cpu+c, delay+d
		}
	}
	return cpu, delay, nil
}

// parsePgrp reads a process's group from its /proc/PID/stat: the third
// field after the command, which is in parentheses and may hold any byte.
func parsePgrp(stat []byte) (int, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %.60q: no command", stat)
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 {
		return 0, fmt.Errorf("stat %.60q: no process group", stat)
	}
	return strconv.Atoi(string(f[2]))
}

// parseSchedstat reads a task's time on the CPU and its run delay: the
// first two of schedstat's three numbers (time on the CPU, time runnable
// but waiting, timeslices), in ns.
func parseSchedstat(data []byte) (cpu, delay time.Duration, err error) {
	f := bytes.Fields(data)
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("schedstat %q: want three numbers", data)
	}
	var n [2]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(string(f[i]), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("schedstat %q: %w", data, err)
		}
	}
	return time.Duration(n[0]), time.Duration(n[1]), nil
}
