// Command hostile is a fixture bot that misbehaves on purpose. It reads its
// behaviour from the file named by its first argument ("MODE [PARAM]"), so one
// static binary and one box serve a whole sequence of misdeeds. It writes what it
// observed to move.json in its working directory.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

func answer(format string, a ...any) {
	os.WriteFile("move.json", []byte(fmt.Sprintf(format, a...)), 0o644)
}

func main() {
	if os.Args[1] == "linger" {
		// The process "leave process" leaves behind: in its own session, idle.
		syscall.Setsid()
		for {
			time.Sleep(time.Hour)
		}
	}
	if m, ok := strings.CutPrefix(os.Args[1], "session:"); ok {
		session(m)
		return
	}
	spec, _ := os.ReadFile(os.Args[1])
	mode, param, _ := strings.Cut(strings.TrimSpace(string(spec)), " ")
	switch {
	case mode == "ok":
		answer("ok")
	case mode == "sleep-forever":
		time.Sleep(time.Hour)
	case mode == "sleep-ms":
		ms, _ := strconv.Atoi(param)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		answer("slept %d", ms)
	case mode == "busy-loop":
		//lint:ignore SA5002 spinning is what this mode is for
		for {
		}
	case mode == "fork-bomb":
		for {
			syscall.RawSyscall(syscall.SYS_FORK, 0, 0, 0)
		}
	case mode == "daemon":
		daemon()
	case mode == "memory-hog":
		// Touch 4 GiB, a page at a time.
		var chunks [][]byte
		for i := 0; i < 4096; i++ {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			chunks = append(chunks, b)
		}
		answer("survived %d", len(chunks))
	case mode == "flood":
		chunk := bytes.Repeat([]byte("flood\n"), 64*1024/8) // 48 KiB
		for i := 0; i < 8192; i++ {                         // 512 MiB each stream
			os.Stdout.Write(chunk)
			os.Stderr.Write(chunk)
		}
		os.Stderr.WriteString("END-OF-FLOOD")
		answer("flooded")
	case mode == "symlink-move":
		os.Symlink("/etc/passwd", "move.json")
	case mode == "huge-move":
		f, _ := os.Create("move.json")
		chunk := bytes.Repeat([]byte{'x'}, 1<<20)
		for i := 0; i < 100; i++ {
			f.Write(chunk)
		}
		f.Close()
	case mode == "write-outside":
		var res []string
		for _, p := range []string{"/probe", "/etc/probe", "/bot/probe", "/usr/probe", "/tmp/probe", "/dev/shm/probe"} {
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				res = append(res, p+"=denied")
			} else {
				res = append(res, p+"=written")
			}
		}
		answer("%s", strings.Join(res, " "))
	case mode == "kill-everything":
		syscall.Kill(1, syscall.SIGKILL)
		syscall.Kill(1, syscall.SIGTERM)
		for pid := 2; pid < 200; pid++ {
			if pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		answer("still here")
		syscall.Kill(-1, syscall.SIGKILL)
	case mode == "data-write":
		// data.bin of N bytes of a fixed pattern.
		n, _ := strconv.Atoi(param)
		os.WriteFile("data.bin", bytes.Repeat([]byte{'d'}, n), 0o644)
		answer("wrote %d", n)
	case mode == "data-flip":
		// One byte of data.bin changed in place: same inode, same size.
		f, err := os.OpenFile("data.bin", os.O_RDWR, 0)
		if err == nil {
			f.WriteAt([]byte{'e'}, 0)
			f.Close()
		}
		answer("flipped %v", err)
	case mode == "leave":
		answer("%s", leave(param))
	case mode == "look":
		answer("%s", look(param))
	case mode == "identity":
		groups, err := os.Getgroups()
		answer("uid=%d gid=%d groups=%v err=%v", os.Getuid(), os.Getgid(), groups, err)
	case mode == "read-stdin":
		data, err := io.ReadAll(os.Stdin)
		answer("read %d bytes, err %v", len(data), err)
	case mode == "exit":
		code, _ := strconv.Atoi(param)
		answer("exiting %d", code)
		os.Exit(code)
	case mode == "segfault":
		segfault()
	case mode == "network":
		// Each address tried over TCP: "open" or "refused" reached
		// something; "blocked" did not.
		var res []string
		for _, addr := range strings.Fields(param) {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			switch {
			case err == nil:
				c.Close()
				res = append(res, addr+"=open")
			case errors.Is(err, syscall.ECONNREFUSED):
				res = append(res, addr+"=refused")
			default:
				res = append(res, addr+"=blocked")
			}
		}
		answer("%s", strings.Join(res, " "))
	case mode == "credentials":
		// What a cluster or an engine could have handed the box.
		var found []string
		for _, p := range []string{"/var/run/secrets/kubernetes.io/serviceaccount", "/run/secrets", "/var/run/docker.sock", "/run/docker.sock"} {
			if _, err := os.Lstat(p); err == nil {
				found = append(found, p)
			}
		}
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "KUBERNETES_") || strings.HasPrefix(kv, "DOCKER_") {
				found = append(found, strings.SplitN(kv, "=", 2)[0])
			}
		}
		answer("found %v", found)
	case mode == "write-10gib":
		// Writes until refused: 10 GiB if nothing stops it.
		f, err := os.Create("big.bin")
		n := int64(0)
		if err == nil {
			chunk := make([]byte, 1<<20)
			for n < 10<<30 {
				w, werr := f.Write(chunk)
				n += int64(w)
				if werr != nil {
					err = werr
					break
				}
			}
			f.Close()
			os.Remove("big.bin")
		}
		answer("wrote %d, %v", n, err != nil)
	case mode == "data-file":
		// Turn 1 writes the data file, later turns read it back.
		if data, err := os.ReadFile("data.bin"); err == nil {
			answer("read %s", data)
		} else {
			os.WriteFile("data.bin", []byte("remembered"), 0o644)
			answer("wrote")
		}
	case mode == "data-10mib":
		os.WriteFile("data.bin", make([]byte, 10<<20), 0o644)
		answer("ok")
	case mode == "data-10mib-plus-1":
		os.WriteFile("data.bin", make([]byte, 10<<20+1), 0o644)
		answer("ok")
	case mode == "data-two-files":
		os.WriteFile("a.bin", []byte("a"), 0o644)
		os.WriteFile("b.bin", []byte("b"), 0o644)
		answer("ok")
	case mode == "data-dir":
		os.Mkdir("sub", 0o755)
		answer("ok")
	case mode == "fill-tmp":
		// Turn 1 fills /tmp; later turns report what is left there.
		if _, err := os.Stat("filled"); err == nil {
			des, _ := os.ReadDir(os.TempDir())
			answer("tmp entries %d", len(des))
			return
		}
		os.WriteFile("filled", nil, 0o644)
		tmp := os.TempDir()
		f, _ := os.Create(filepath.Join(tmp, "filler"))
		chunk := make([]byte, 1<<20)
		n := 0
		for ; n < 4096; n++ {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
		f.Close()
		os.Mkdir(filepath.Join(tmp, "locked"), 0o700)
		os.WriteFile(filepath.Join(tmp, "locked", "x"), []byte("x"), 0o644)
		os.Chmod(filepath.Join(tmp, "locked"), 0)
		answer("filled %d MiB", n)
	default:
		fmt.Fprintln(os.Stderr, "hostile: unknown mode", mode)
		os.Exit(99)
	}
}

// daemon leaves a double-forked, setsid grandchild behind. On the next turn it
// reports whether the previous one is still alive.
func daemon() {
	if len(os.Args) > 2 && os.Args[2] == "child" {
		syscall.Setsid()
		for {
			os.WriteFile("daemon-heartbeat", []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
			time.Sleep(5 * time.Millisecond)
		}
	}
	report := "first"
	if data, err := os.ReadFile("daemon.pid"); err == nil {
		pid, _ := strconv.Atoi(string(data))
		if syscall.Kill(pid, 0) == nil {
			report = "survivor alive"
		} else {
			report = "survivor gone"
		}
	}
	self, _ := os.Executable()
	attr := &syscall.ProcAttr{Dir: ".", Files: []uintptr{0, 1, 2}}
	pid, err := syscall.ForkExec(self, []string{os.Args[0], os.Args[1], "child"}, attr)
	if err == nil {
		os.WriteFile("daemon.pid", []byte(strconv.Itoa(pid)), 0o644)
		for i := 0; i < 200; i++ {
			if _, err := os.Stat("daemon-heartbeat"); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	answer("%s", report)
}

// marker is where "leave PLACE" writes and "look PLACE" looks: a file in the
// game directory (the working directory), in the scratch directory ($TMPDIR,
// /tmp in a container) or in /dev/shm.
func marker(place string) string {
	switch place {
	case "game":
		return "memo.txt"
	case "tmp":
		return filepath.Join(os.TempDir(), "memo.txt")
	case "shm":
		return "/dev/shm/memo.txt"
	}
	return ""
}

// memoKey is the System V IPC key of what "leave sysv" makes.
const memoKey = 0x4d454d4f

// leave leaves something of this game behind for the next one: a marker file
// in place, a setsid process that runs on (place "process"), a POSIX message
// queue ("mqueue") or a System V shared memory segment, message queue and
// semaphore set ("sysv"), all of which outlive their maker. It says
// "left PLACE" once it is done, so that a test cannot pass because nothing was
// left in the first place.
func leave(place string) string {
	if place == "process" {
		self, _ := os.Executable()
		pid, err := syscall.ForkExec(self, []string{os.Args[0], "linger"}, &syscall.ProcAttr{Dir: "/"})
		if err != nil {
			return "could not leave process: " + err.Error()
		}
		for i := 0; i < 400; i++ {
			if sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0); errno == 0 && int(sid) == pid {
				return "left process"
			}
			time.Sleep(5 * time.Millisecond)
		}
		return "could not leave process: it did not start its own session"
	}
	switch place {
	case "mqueue":
		fd, err := mqOpen(syscall.O_CREAT | syscall.O_RDWR)
		if err != nil {
			return "could not leave mqueue: " + err.Error()
		}
		syscall.Close(fd)
		return "left mqueue"
	case "sysv":
		const create = 0o1000 | 0o600 // IPC_CREAT
		for _, get := range []struct {
			name string
			nr   uintptr
			arg  uintptr
		}{{"shm", syscall.SYS_SHMGET, 4096}, {"msg", syscall.SYS_MSGGET, create}, {"sem", syscall.SYS_SEMGET, 1}} {
			a2, a3 := get.arg, uintptr(create)
			if get.name == "msg" {
				a2, a3 = create, 0
			}
			if _, _, errno := syscall.RawSyscall(get.nr, memoKey, a2, a3); errno != 0 {
				return "could not leave sysv " + get.name + ": " + errno.Error()
			}
		}
		return "left sysv"
	}
	p := marker(place)
	if p == "" {
		return "unknown place " + place
	}
	if err := os.WriteFile(p, []byte("written in the last game"), 0o644); err != nil {
		return "could not leave " + place + ": " + err.Error()
	}
	return "left " + place
}

// look says whether what leave left in place is still there: "PLACE absent"
// or "PLACE present", and for "process" the PIDs of every process but PID 1
// and this one ("process none").
func look(place string) string {
	if place == "process" {
		des, err := os.ReadDir("/proc")
		if err != nil {
			return "process unknown: " + err.Error()
		}
		var pids []string
		for _, de := range des {
			pid, err := strconv.Atoi(de.Name())
			if err == nil && pid != 1 && pid != os.Getpid() {
				pids = append(pids, de.Name())
			}
		}
		if len(pids) == 0 {
			return "process none"
		}
		return "process " + strings.Join(pids, " ")
	}
	switch place {
	case "mqueue":
		fd, err := mqOpen(syscall.O_RDONLY)
		if err != nil {
			return "mqueue absent"
		}
		syscall.Close(fd)
		return "mqueue present"
	case "sysv":
		var found []string
		for _, get := range []struct {
			name   string
			nr     uintptr
			a2, a3 uintptr
		}{{"shm", syscall.SYS_SHMGET, 0, 0}, {"msg", syscall.SYS_MSGGET, 0, 0}, {"sem", syscall.SYS_SEMGET, 0, 0}} {
			if _, _, errno := syscall.RawSyscall(get.nr, memoKey, get.a2, get.a3); errno == 0 {
				found = append(found, get.name)
			}
		}
		if len(found) > 0 {
			return "sysv present: " + strings.Join(found, " ")
		}
		return "sysv absent"
	}
	p := marker(place)
	if p == "" {
		return "unknown place " + place
	}
	if _, err := os.Lstat(p); err == nil {
		return place + " present"
	}
	return place + " absent"
}

// mqOpen opens the POSIX message queue /memo.
func mqOpen(flags int) (int, error) {
	name, _ := syscall.BytePtrFromString("memo")
	fd, _, errno := syscall.Syscall6(syscall.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), uintptr(flags|syscall.O_CLOEXEC), 0o600, 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// segfault dies of a real SIGSEGV with the default action, not a Go panic.
func segfault() {
	type sigaction struct {
		handler  uintptr
		flags    uint64
		restorer uintptr
		mask     uint64
	}
	sa := sigaction{handler: 0} // SIG_DFL
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGSEGV), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
	syscall.Kill(os.Getpid(), syscall.SIGSEGV)
	time.Sleep(time.Second)
}

// session is the long-lived mode: it answers "ask X" lines with "re X" and
// misbehaves as mode says. "heard" answers "re X heard A,B" with the other
// lines received since the last question; "deaf" never reads its input.
func session(mode string) {
	out := bufio.NewWriter(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	var heard []string
	switch mode {
	case "deaf":
		time.Sleep(time.Hour)
	case "early":
		fmt.Println("hello")
	case "flood":
		line := strings.Repeat("flood ", 100)
		for {
			fmt.Println(line)
		}
	}
	answered := 0
	for in.Scan() {
		q, ok := strings.CutPrefix(in.Text(), "ask ")
		if !ok {
			heard = append(heard, in.Text())
			continue
		}
		switch mode {
		case "silent":
			continue
		case "places":
			// "ask leave PLACE" and "ask look PLACE", as the file modes.
			verb, place, _ := strings.Cut(q, " ")
			switch verb {
			case "leave":
				fmt.Fprintln(out, leave(place))
			case "look":
				fmt.Fprintln(out, look(place))
			default:
				fmt.Fprintln(out, "unknown question "+q)
			}
		case "longline":
			fmt.Fprintln(out, strings.Repeat("x", 100*1024))
		case "heard":
			fmt.Fprintln(out, "re "+q+" heard "+strings.Join(heard, ","))
			heard = nil
		default:
			fmt.Fprintln(out, "re "+q)
		}
		out.Flush()
		answered++
		if mode == "exit-after-1" {
			os.Exit(0)
		}
		if mode == "busy" {
			go func() {
				//lint:ignore SA5002 spinning is what this mode is for
				for {
				}
			}()
		}
	}
}
