// Command ccfixture is a Code Clash fixture bot for the match tests. It plays the
// first legal move, except that the name it runs under (argv[0]) makes it
// misbehave in one specific way, so each row of the verdict table has a bot that
// produces it:
//
//	legal       first legal move, keeps a data file and exits 3 if it vanished
//	illegal     a syntactically fine but illegal move
//	garbage     move.json that is not JSON
//	silent      writes no move.json
//	exit-N      writes a legal move, then exits N
//	segv        dies of SIGSEGV
//	hog         allocates until killed
//	sleeper     sleeps past any limit
//	two-files   keeps two data files
//	big-data    keeps a data file of 10 MiB + 1
//	slow-N      sleeps N ms every turn, then plays legally
//	crash-step4 plays legally except on setup step 4, where it dies of SIGSEGV
//	slow-fog    plays legally, but sleeps past any limit when its view is fogged
//	shuffle     never captures: the first legal move onto an empty square
//	late-fault  plays legally through setup, then writes garbage every turn
//	fresh-10m   plays like shuffle and rewrites its data file with 10 MiB of
//	            new random bytes every turn
package main

import (
	"bytes"
	crand "crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/arenabots/arena/rules/codeclash"
)

const dataFile = "fixture.dat"

// hoard keeps what the "hog" mode allocates reachable.
var hoard [][]byte

func main() {
	mode := filepath.Base(os.Args[0])
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	st, err := codeclash.FromView(codeclash.DefaultOptions(), raw)
	if err != nil {
		os.Exit(1)
	}
	moves := st.Moves()
	if len(moves) == 0 {
		os.Exit(2)
	}
	legal := st.EncodeMove(moves[0])
	turns := 0
	if data, err := os.ReadFile(dataFile); err == nil {
		turns, _ = strconv.Atoi(string(data))
	} else if mode == "legal" && st.SetupStep() != 1 {
		// Not our first turn, yet the data file is gone.
		os.Exit(3)
	}
	os.WriteFile(dataFile, []byte(strconv.Itoa(turns+1)), 0o644)
	write := func(b []byte) { os.WriteFile("move.json", b, 0o644) }

	switch {
	case mode == "legal":
		write(legal)
	case mode == "illegal":
		// Place the king (or move a piece) onto a square that is never legal.
		write([]byte(`{"move": {"from": [0, 0], "to": [2, 2]}}`))
		if st.Phase() == "play" {
			write([]byte(`{"move": {"from": [2, 2], "to": [2, 2]}}`))
		}
	case mode == "garbage":
		write([]byte("e2e4, obviously"))
	case mode == "silent":
	case strings.HasPrefix(mode, "exit-"):
		write(legal)
		code, _ := strconv.Atoi(strings.TrimPrefix(mode, "exit-"))
		os.Exit(code)
	case mode == "crash-step4":
		if st.Phase() == "setup" && st.SetupStep() == 4 {
			segv()
		}
		write(legal)
	case mode == "slow-fog":
		if bytes.Contains(raw, []byte(`"F"`)) {
			time.Sleep(time.Hour)
		}
		write(legal)
	case mode == "segv":
		segv()
	case mode == "hog":
		for {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
	case mode == "sleeper":
		time.Sleep(time.Hour)
	case mode == "two-files":
		os.WriteFile("second.dat", []byte("x"), 0o644)
		write(legal)
	case mode == "big-data":
		os.WriteFile(dataFile, make([]byte, 10<<20+1), 0o644)
		write(legal)
	case strings.HasPrefix(mode, "slow-"):
		ms, _ := strconv.Atoi(strings.TrimPrefix(mode, "slow-"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		write(legal)
	case mode == "shuffle" || mode == "fresh-10m":
		if mode == "fresh-10m" {
			noise := make([]byte, 10<<20)
			crand.Read(noise)
			os.WriteFile(dataFile, noise, 0o644)
		}
		b := st.Board()
		for _, m := range moves {
			if b[m.To.R][m.To.C].Kind == codeclash.None {
				legal = st.EncodeMove(m)
				break
			}
		}
		write(legal)
	case mode == "late-fault":
		if turns >= 9 {
			write([]byte("{"))
		} else {
			write(legal)
		}
	default:
		os.Exit(42)
	}
}

// segv dies of a real SIGSEGV with the default action, not a Go panic.
func segv() {
	type sigaction struct {
		handler, flags, restorer, mask uint64
	}
	sa := sigaction{}
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGSEGV), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
	syscall.Kill(os.Getpid(), syscall.SIGSEGV)
	time.Sleep(time.Second)
}
