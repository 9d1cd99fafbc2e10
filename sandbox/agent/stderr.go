package agent

import "sync"

// Stderr keeps the last bytes the agent wrote to its stderr (its
// diagnostics), for the error that says why a box went away.
type Stderr struct {
	mu  sync.Mutex
	buf []byte
	n   int
}

// NewStderr keeps the last n bytes.
func NewStderr(n int) *Stderr { return &Stderr{n: n} }

func (r *Stderr) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if len(r.buf) > r.n {
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-r.n:]...)
	}
	return len(p), nil
}

func (r *Stderr) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.buf)
}
