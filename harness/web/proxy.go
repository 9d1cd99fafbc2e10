package web

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxies are the reverse proxies the operator put in front of the server
// (arena serve --trust-proxy): only they may say, in X-Forwarded-For and
// X-Forwarded-Proto, who the client is and how it came.
type Proxies struct {
	// Hops is how many proxies stand in front, each appending the address
	// it was reached from (0: the addresses in Nets say who is a proxy).
	Hops int
	Nets []netip.Prefix
}

// ParseProxies reads --trust-proxy: a number of hops ("1": one proxy,
// such as nginx, in front) or the proxies' addresses and networks,
// comma-separated ("10.0.0.5,192.168.1.0/24").
func ParseProxies(spec string) (*Proxies, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 1 || n > 16 {
			return nil, fmt.Errorf("a number of proxy hops from 1 to 16, got %d", n)
		}
		return &Proxies{Hops: n}, nil
	}
	p := &Proxies{}
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if pre, err := netip.ParsePrefix(f); err == nil {
			p.Nets = append(p.Nets, pre.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a number of hops nor a proxy's address or network (such as 10.0.0.5 or 10.0.0.0/8)", f)
		}
		p.Nets = append(p.Nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return p, nil
}

// trusts says whether addr is one of the proxies.
func (p *Proxies) trusts(addr string) bool {
	a, err := netip.ParseAddr(strings.TrimSpace(addr))
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, n := range p.Nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// fromProxy says whether a request reached the server through a trusted
// proxy: with a hop count any peer is (the operator lets only the proxy
// reach the server); with addresses the peer must be one of them.
func (p *Proxies) fromProxy(peer string) bool {
	return p != nil && (p.Hops > 0 || p.trusts(peer))
}

// client is the address a request came from, given its peer and its
// X-Forwarded-For: the right-most hop the proxies did not add. Behind Hops
// proxies that each append, it is the Hops-th address from the right
// (nginx's $proxy_add_x_forwarded_for); whatever the client wrote itself
// stands to the left of it and is never believed. With addresses, the
// right-most address that is not a proxy's.
func (p *Proxies) client(peer, forwarded string) string {
	if !p.fromProxy(peer) || forwarded == "" {
		return peer
	}
	hops := strings.Split(forwarded, ",")
	for i := range hops {
		hops[i] = strings.TrimSpace(hops[i])
	}
	if p.Hops > 0 {
		if len(hops) < p.Hops {
			return hops[0]
		}
		return hops[len(hops)-p.Hops]
	}
	for i := len(hops) - 1; i >= 0; i-- {
		if !p.trusts(hops[i]) {
			return hops[i]
		}
	}
	return hops[0]
}

// peerOf is a request's peer address, without its port.
func peerOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limiter counts failed logins per address in a window. It keeps at most
// maxAddrs addresses: when full, the address whose last failure is oldest
// is forgotten, so no stream of addresses, forged or not, grows it.
type limiter struct {
	mu       sync.Mutex
	max      int
	window   time.Duration
	maxAddrs int
	fails    map[string][]time.Time
}

func newLimiter(max int, window time.Duration) *limiter {
	return &limiter{max: max, window: window, maxAddrs: 10000, fails: map[string][]time.Time{}}
}

func (l *limiter) recent(addr string, now time.Time) []time.Time {
	var keep []time.Time
	for _, t := range l.fails[addr] {
		if now.Sub(t) < l.window {
			keep = append(keep, t)
		}
	}
	if keep == nil {
		delete(l.fails, addr)
	} else {
		l.fails[addr] = keep
	}
	return keep
}

// failed counts a failed try of addr and says whether it is answered as
// one (401), or refused as one too many (429). Only failures are counted
// and refused: a valid token is always let in, so a team that shares an
// address with one that guesses, or with a stale token in its CI, is
// never locked out. Tokens are 256 random bits: the limit slows a client
// that guesses, it is not what keeps a token from being guessed.
func (l *limiter) failed(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	recent := l.recent(addr, now)
	if len(recent) >= l.max {
		return false
	}
	if recent == nil && len(l.fails) >= l.maxAddrs {
		l.forget(now)
	}
	l.fails[addr] = append(recent, now)
	return true
}

// forget makes room: the expired addresses go and, if that is not a tenth
// of the room, addresses drawn at random (the map's order) until it is,
// so that forgetting costs little however fast new addresses come.
func (l *limiter) forget(now time.Time) {
	for a, ts := range l.fails {
		if now.Sub(ts[len(ts)-1]) >= l.window {
			delete(l.fails, a)
		}
	}
	for a := range l.fails {
		if len(l.fails) < l.maxAddrs-l.maxAddrs/10 {
			break
		}
		delete(l.fails, a)
	}
}

// size is how many addresses the limiter keeps.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.fails)
}

// The pace a request body must keep: it may stall for paceStall at most,
// and after paceGrace it must have come at paceRate bytes a second on
// average. An upload of the largest size at that rate takes upload_size /
// paceRate; a client that trickles is cut long before.
const (
	paceStall = 10 * time.Second
	paceGrace = 10 * time.Second
	paceRate  = 32 << 10
)

// errTooSlow is a body that came slower than the pace.
var errTooSlow = errors.New("the request's body comes too slowly")

// paced is a request body that must keep the pace.
type paced struct {
	body  io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	n     int64
}

func (p *paced) Read(b []byte) (int, error) {
	if el := time.Since(p.start); el > paceGrace && float64(p.n) < el.Seconds()*paceRate {
		return 0, errTooSlow
	}
	// A connection that cannot take a deadline (a test's recorder) is read
	// without one.
	_ = p.rc.SetReadDeadline(time.Now().Add(paceStall))
	n, err := p.body.Read(b)
	p.n += int64(n)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = errTooSlow
	}
	return n, err
}

func (p *paced) Close() error { return p.body.Close() }
