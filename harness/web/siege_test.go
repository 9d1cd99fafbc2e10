package web

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/client"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/internal/ziptest"
)

// served is a real arena serve on the local sandbox, for attacks on the
// server itself: nothing here needs an engine.
func served(t *testing.T, toml string, args ...string) *liveEvent {
	t.Helper()
	e := writeEvent(t, toml, nil)
	e.srv = startServe(t, e.dir, append([]string{"--sandbox", "local", "--validators", "2"}, args...)...)
	return e
}

// pid is the served process's id.
func (s *arenaServer) pid() int { return s.cmd.Process.Pid }

// peakMemory is the served process's peak resident memory, in bytes.
func (s *arenaServer) peakMemory(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid()))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", s.pid())
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// session logs token in through the login form and returns its cookie and
// the team page's CSRF token.
func session(t *testing.T, base, token string) (*http.Cookie, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := postLogin(c, base, token, base)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var cookie *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie {
			cookie = ck
		}
	}
	if cookie == nil {
		t.Fatalf("the login set no session cookie: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/team", nil)
	req.AddCookie(cookie)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the team page carries no CSRF token")
	}
	return cookie, string(m[1])
}

// follow opens the team's event stream with cookie and returns a channel
// that is closed when the server ends it.
func follow(t *testing.T, base string, cookie *http.Cookie) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/team/events", nil)
	req.AddCookie(cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("open the stream: %v %v", res, err)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer res.Body.Close()
		io.Copy(io.Discard, res.Body)
	}()
	return ended
}

// TestAStreamEndsWithItsSession: a team's live stream opened with a login
// ends within a second of that login's end, whichever way it ends: logged
// out, a new token, the team disabled.
func TestAStreamEndsWithItsSession(t *testing.T) {
	e := served(t, "game = \"codeclash\"\n")
	base := e.srv.URL
	ends := map[string]func(cookie *http.Cookie, csrf string){
		"logged out": func(cookie *http.Cookie, csrf string) {
			req, _ := http.NewRequest(http.MethodPost, base+"/logout", strings.NewReader("csrf="+csrf))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(cookie)
			res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil || res.StatusCode != http.StatusSeeOther {
				t.Fatalf("logout: %v %v", res, err)
			}
		},
		"a new token": func(*http.Cookie, string) {
			if code, body := callAPI(t, base, "POST", "/api/v1/token", e.a.Token, ""); code != http.StatusOK {
				t.Fatalf("new token: %d %s", code, body)
			} else {
				e.a.Token = regexp.MustCompile(`[0-9a-f]{64}`).FindString(body)
			}
		},
		"the team disabled": func(*http.Cookie, string) {
			if code, body := callAPI(t, base, "POST", fmt.Sprintf("/api/v1/admin/teams/%d/disable", e.a.ID), e.admin, ""); code != http.StatusOK {
				t.Fatalf("disable: %d %s", code, body)
			}
		},
	}
	for _, how := range []string{"logged out", "a new token", "the team disabled"} {
		cookie, csrf := session(t, base, e.a.Token)
		ended := follow(t, base, cookie)
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		ends[how](cookie, csrf)
		select {
		case <-ended:
			t.Logf("%s: the stream ended %v later", how, time.Since(start).Round(time.Millisecond))
		case <-time.After(time.Second):
			t.Errorf("%s: the stream goes on a second later", how)
		}
	}
}

// TestALoginFromAnotherSiteIsRefused: the login form posted from another
// site's page, or by a client that says nothing of where it posts from, is
// refused; from the site's own page it logs in.
func TestALoginFromAnotherSiteIsRefused(t *testing.T) {
	e := served(t, "game = \"codeclash\"\n")
	base := e.srv.URL
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for origin, want := range map[string]int{"https://evil.example": http.StatusForbidden, "": http.StatusForbidden, base: http.StatusSeeOther} {
		res, err := postLogin(c, base, e.a.Token, origin)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want || (want == http.StatusForbidden && len(res.Cookies()) > 0) {
			t.Errorf("a login posted from %q: %d with %d cookies, want %d", origin, res.StatusCode, len(res.Cookies()), want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader("token="+e.a.Token))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", base) // a browser's Sec-Fetch-Site wins
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site post by its Sec-Fetch-Site: %v %v", res, err)
	}
}

// TestForgedForwardedHopsAreNotBelieved: behind one trusted proxy that
// appends the address it was reached from, a client that writes its own
// X-Forwarded-For hops is still the address the proxy saw: thirty bad
// tokens with varying first hops reach the limit at the eleventh.
func TestForgedForwardedHopsAreNotBelieved(t *testing.T) {
	e := served(t, "game = \"codeclash\"\n", "--trust-proxy", "1")
	refused := 0
	for i := range 30 {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+strings.Repeat("0", 63)+fmt.Sprint(i%10))
		// What nginx's $proxy_add_x_forwarded_for sends: the client's own
		// header, then the address it came from.
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d, 203.0.113.7", i, i, i))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != 20 {
		t.Errorf("%d of 30 bad tokens from one address refused as too many, want the 20 after the tenth", refused)
	}
	// Another client behind the same proxy is another address.
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+strings.Repeat("1", 64))
	req.Header.Set("X-Forwarded-For", "198.51.100.9")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("another client's first bad token: %v %v, want 401", res, err)
	}
}

// splitBombZip is a 0.5 MB ZIP of 480 entries of exactly 1 MiB of zeros.
func splitBombZip(t *testing.T) []byte {
	t.Helper()
	var entries []ziptest.Entry
	zeros := make([]byte, 1<<20)
	for i := range 480 {
		entries = append(entries, ziptest.Entry{Name: fmt.Sprintf("part-%03d.bin", i), Data: zeros})
	}
	return ziptest.Bytes(t, entries...)
}

// TestNoUploadCanExhaustTheServer: a bomb split in 480 entries of 1 MiB,
// uploaded twice at once, is refused at the archive check before anything
// is inflated: the server's memory stays low and nothing of it is unpacked;
// an entry name too long for a file system is the team's failure, not the
// server's error; a body cut short, or shorter than it says, is 400 and not
// stored; a body sent slowly is cut.
func TestNoUploadCanExhaustTheServer(t *testing.T) {
	e := served(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 50\npending_validations = 5\n")
	base := e.srv.URL
	bomb := writeFile(t, "bomb.zip", splitBombZip(t))
	before := e.srv.peakMemory(t)
	c := &client.Client{Server: base, Token: e.a.Token}
	var wg sync.WaitGroup
	subs := make([]event.Submission, 2)
	for i := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub, _ := waitFor(t, c, bomb)
			subs[i] = sub
		}()
	}
	wg.Wait()
	peak := e.srv.peakMemory(t)
	t.Logf("the server's peak memory: %d MiB before the two bombs, %d MiB after", before>>20, peak>>20)
	if peak > 300<<20 {
		t.Errorf("the server's peak memory reached %d MiB under two split bombs, want under 300", peak>>20)
	}
	for _, sub := range subs {
		if sub.State != event.Failed || !strings.Contains(sub.Summary, "archive:") || !strings.Contains(sub.Summary, "compression bomb") {
			t.Errorf("the split bomb: %s (%s), want failed at the archive check", sub.State, sub.Summary)
		}
	}
	kept, err := dirSize(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if kept > 8<<20 {
		t.Errorf("the event keeps %d bytes after two 0.5 MB bombs", kept)
	}

	long := writeFile(t, "long.zip", ziptest.Bytes(t, ziptest.Entry{Name: strings.Repeat("x", 4000) + ".py", Data: []byte("print(1)\n")}))
	sub, report := waitFor(t, c, long)
	if sub.State != event.Failed || !strings.Contains(report, "limit is") {
		t.Errorf("a name of 4000 bytes: %s (%s), want the team's failure at the archive check:\n%s", sub.State, sub.Summary, report)
	}
	if strings.Contains(e.srv.Logs(), "level=ERROR") {
		t.Errorf("the server logged an error for a team's fault:\n%s", e.srv.Logs())
	}

	// A body shorter than it says: the client stops sending and shuts its
	// side. Nothing is stored.
	code, answer := rawUpload(t, base, e.a.Token, 256<<10, 4<<10, 0)
	if code != http.StatusBadRequest || !strings.Contains(answer, `"incomplete"`) {
		t.Errorf("a body cut short: %d %s, want 400 incomplete", code, answer)
	}
	// A body that trickles is cut.
	start := time.Now()
	code, answer = rawUpload(t, base, e.a.Token, 256<<10, 100, time.Second)
	if code != http.StatusRequestTimeout || !strings.Contains(answer, `"too_slow"`) {
		t.Errorf("a body sent slowly: %d %s, want 408 too_slow", code, answer)
	}
	t.Logf("a trickling body was cut after %v", time.Since(start).Round(100*time.Millisecond))
	if _, body := callAPI(t, base, "GET", "/api/v1/submissions", e.a.Token, ""); strings.Count(body, `"sha256"`) != 3 {
		t.Errorf("the team's submissions: %s, want the two bombs and the long name: nothing of a cut upload", body)
	}
	if strings.Contains(e.srv.Logs(), "level=ERROR") {
		t.Errorf("the server logged an error for a client's fault:\n%s", e.srv.Logs())
	}
}

// rawUpload sends an upload that declares size bytes, sends sent of them,
// one byte every gap when gap is set, then shuts its side; it returns the
// answer's status and body.
func rawUpload(t *testing.T, base, token string, size, sent int, gap time.Duration) (int, string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("file", "bot.py"); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/v1/submissions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		u.Host, token, mw.FormDataContentType(), size)
	conn.Write(head.Bytes())
	for i := range sent {
		if gap > 0 {
			if _, err := conn.Write([]byte{'#'}); err != nil {
				break // the server cut it
			}
			time.Sleep(gap)
			if time.Duration(i+1)*gap > paceGrace+2*time.Second {
				break // past the grace: the server has cut it
			}
			continue
		}
		conn.Write(bytes.Repeat([]byte{'#'}, sent))
		break
	}
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// The limiter keeps a bounded number of addresses whatever arrives.
func TestTheLimiterForgetsWhatItCannotKeep(t *testing.T) {
	l := newLimiter(10, 10*time.Minute)
	for i := range 25000 {
		l.failed(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	if n := l.size(); n > l.maxAddrs {
		t.Errorf("the limiter keeps %d addresses, want at most %d", n, l.maxAddrs)
	}
	// The newest are still counted.
	for range 9 {
		l.failed("10.0.97.167")
	}
	if l.failed("10.0.97.167") {
		t.Error("an address tried 11 times is not refused")
	}
}
