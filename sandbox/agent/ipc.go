package agent

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// ipcObject is one System V IPC object: a shared memory segment, a message
// queue or a semaphore set. They live in the container's IPC namespace until
// removed, whoever made them is gone, so a bot could leave one for its next
// game.
type ipcObject struct {
	Kind string // "shm", "msg" or "sem"
	ID   int
	UID  int
}

func (o ipcObject) String() string { return fmt.Sprintf("%s %d of uid %d", o.Kind, o.ID, o.UID) }

// sysvObjects lists the IPC namespace's objects from /proc/sysvipc. A kernel
// without System V IPC has none.
func sysvObjects() ([]ipcObject, error) {
	var out []ipcObject
	for _, kind := range []string{"shm", "msg", "sem"} {
		f, err := os.Open("/proc/sysvipc/" + kind)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		idCol, uidCol := -1, -1
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if idCol < 0 {
				for i, h := range fields {
					switch h {
					case kind + "id", "msqid":
						idCol = i
					case "uid":
						uidCol = i
					}
				}
				if idCol < 0 || uidCol < 0 {
					f.Close()
					return nil, fmt.Errorf("/proc/sysvipc/%s: unknown header %q", kind, sc.Text())
				}
				continue
			}
			if len(fields) <= max(idCol, uidCol) {
				continue
			}
			id, err1 := strconv.Atoi(fields[idCol])
			uid, err2 := strconv.Atoi(fields[uidCol])
			if err1 != nil || err2 != nil {
				f.Close()
				return nil, fmt.Errorf("/proc/sysvipc/%s: bad line %q", kind, sc.Text())
			}
			out = append(out, ipcObject{Kind: kind, ID: id, UID: uid})
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// removeSysV removes the objects. Only an object's owner (or CAP_SYS_ADMIN,
// which the agent does not have) may remove it, so the agent takes each
// owner's uid for the removal, on one thread only.
func removeSysV(objs []ipcObject) error {
	byUID := map[int][]ipcObject{}
	for _, o := range objs {
		byUID[o.UID] = append(byUID[o.UID], o)
	}
	var bad []string
	for uid, list := range byUID {
		err := asEffectiveUID(uid, func() error {
			var errs []string
			for _, o := range list {
				var errno syscall.Errno
				switch o.Kind {
				case "shm":
					_, _, errno = syscall.Syscall(syscall.SYS_SHMCTL, uintptr(o.ID), ipcRMID, 0)
				case "msg":
					_, _, errno = syscall.Syscall(syscall.SYS_MSGCTL, uintptr(o.ID), ipcRMID, 0)
				case "sem":
					_, _, errno = syscall.Syscall6(syscall.SYS_SEMCTL, uintptr(o.ID), 0, ipcRMID, 0, 0, 0)
				}
				if errno != 0 && errno != syscall.EINVAL && errno != syscall.EIDRM { // EINVAL: already gone
					errs = append(errs, fmt.Sprintf("remove %v: %v", o, errno))
				}
			}
			if len(errs) > 0 {
				return errors.New(strings.Join(errs, "; "))
			}
			return nil
		})
		if err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

const ipcRMID = 0 // IPC_RMID

// asEffectiveUID runs f on a thread of its own whose effective uid is uid, and
// gives the thread back as root. Credentials are per thread in Linux; the raw
// system call changes only this one (syscall.Setresuid would change them all).
// The real and saved uids stay 0, so the capabilities come back with euid 0. A
// thread that cannot become root again is never given back: it ends with its
// goroutine.
func asEffectiveUID(uid int, f func() error) error {
	if uid == os.Geteuid() {
		return f()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		const keep = ^uintptr(0) // -1: leave as is
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SETRESUID, keep, uintptr(uid), keep); errno != 0 {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("take uid %d: %w", uid, errno)
			return
		}
		err := f()
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SETRESUID, keep, 0, keep); errno != 0 {
			errc <- fmt.Errorf("become root again after uid %d: %w", uid, errno)
			return // still locked: the thread exits with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}
