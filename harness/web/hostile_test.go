package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
)

// TestUploadsAreCappedAndCounted: an upload over the event's size is 413, a
// team over its hourly quota gets 429, and a body that is not a form is 400,
// each as JSON with its code.
func TestUploadsAreCappedAndCounted(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[limits]\nupload_size = \"1KiB\"\n[quotas]\nuploads_per_hour = 2\npending_validations = 5\n")
	body, ct := multipartFile(t, "big.zip", make([]byte, 4<<10))
	res, out := e.do(t, http.MethodPost, "/api/v1/submissions", e.a.Token, body, ct)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(out, `"code": "too_large"`) {
		t.Errorf("a 4 KiB upload to a 1 KiB event: %d %s", res.StatusCode, out)
	}
	for i := range 3 {
		body, ct := multipartFile(t, "bot.py", []byte("print(1)\n"))
		res, out := e.do(t, http.MethodPost, "/api/v1/submissions", e.a.Token, body, ct)
		want := http.StatusCreated
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if res.StatusCode != want {
			t.Errorf("upload %d: %d %s, want %d", i+1, res.StatusCode, out, want)
		}
		if i == 2 && !strings.Contains(out, `"code": "quota"`) {
			t.Errorf("the third upload in an hour: %s, want the quota's code", out)
		}
	}
	res, out = e.do(t, http.MethodPost, "/api/v1/submissions", e.b.Token, strings.NewReader("not a form"), "text/plain")
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(out, `"code": "bad_request"`) {
		t.Errorf("a body that is not a form: %d %s", res.StatusCode, out)
	}
	if strings.Contains(out, "goroutine") || strings.Contains(out, ".go:") {
		t.Errorf("an error answer shows the server's internals: %s", out)
	}
}

// TestALoginIsACookieThatFormsMustProve: a token logs in as an HttpOnly,
// SameSite=Strict cookie; a form posted with the cookie but without the
// session's CSRF token is refused; a new token ends the old one's logins; a
// disabled team cannot log in.
func TestALoginIsACookieThatFormsMustProve(t *testing.T) {
	e := newTestEvent(t, "")
	// Two versions that play: the older has a form to make it active.
	for _, name := range []string{"old.py", "new.py"} {
		sub, err := e.store.AddSubmission(context.Background(), e.server.Config, e.a.ID, name, strings.NewReader("print(1)\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.SetState(context.Background(), sub.ID, event.Passed, ""); err != nil {
			t.Fatal(err)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := postLogin(c, e.http.URL, e.a.Token, e.http.URL)
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
	if res.StatusCode != http.StatusSeeOther || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d, cookie %+v", res.StatusCode, cookie)
	}
	get := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, e.http.URL+path, nil)
		req.AddCookie(cookie)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 32<<10)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return res.StatusCode, b.String()
	}
	status, page := get("/team")
	if status != http.StatusOK || !strings.Contains(page, "Alpha") {
		t.Fatalf("the team page with the cookie: %d", status)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatal("the team page's forms carry no CSRF token")
	}
	post := func(form url.Values) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/team/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(cookie)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if got, _ := post(url.Values{}); got != http.StatusForbidden {
		t.Errorf("a form without the CSRF token: %d, want 403", got)
	}
	if got, _ := post(url.Values{"csrf": {"0123"}}); got != http.StatusForbidden {
		t.Errorf("a form with a wrong CSRF token: %d, want 403", got)
	}
	got, tokenPage := post(url.Values{"csrf": {csrf[1]}})
	if got != http.StatusOK {
		t.Errorf("a form with the CSRF token: %d, want 200", got)
	}
	// The page of the new token, opened in a new session, has every form
	// carry that session's token: one and the same, the new one.
	tokens := map[string]bool{}
	for _, m := range regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindAllStringSubmatch(tokenPage, -1) {
		tokens[m[1]] = true
	}
	if len(tokens) != 1 || tokens[csrf[1]] || !strings.Contains(tokenPage, `/activate"`) {
		t.Errorf("the new token's page carries the CSRF tokens %v (the old session's was %s)", tokens, csrf[1])
	}
	// The new token ended the old login and the old token.
	if status, _ := get("/team"); status != http.StatusUnauthorized {
		t.Errorf("the old login after a new token: %d, want 401", status)
	}
	if res, _ := e.do(t, http.MethodGet, "/api/v1/me", e.a.Token, nil, ""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old token after a new one: %d, want 401", res.StatusCode)
	}
	// A disabled team cannot log in.
	if err := e.store.SetDisabled(context.Background(), e.b.ID, true); err != nil {
		t.Fatal(err)
	}
	res, err = postLogin(c, e.http.URL, e.b.Token, e.http.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a disabled team's login: %d, want 401", res.StatusCode)
	}
}

// TestATeamPageShowsAChangeAtOnce: the team page is reused for a second,
// but never past a change: an upload and a new active version show on the
// next ask.
func TestATeamPageShowsAChangeAtOnce(t *testing.T) {
	e := newTestEvent(t, "")
	ctx := context.Background()
	first, err := e.store.AddSubmission(ctx, e.server.Config, e.a.ID, "first.py", strings.NewReader("print(1)\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetState(ctx, first.ID, "passed", ""); err != nil {
		t.Fatal(err)
	}
	e.server.Changed(first)
	if _, page := e.do(t, http.MethodGet, "/team", e.a.Token, nil, ""); !strings.Contains(page, "first.py") {
		t.Fatal("the team page lacks its upload")
	}
	body, ct := multipartFile(t, "second.py", []byte("print(2)\n"))
	if res, out := e.do(t, http.MethodPost, "/api/v1/submissions", e.a.Token, body, ct); res.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", res.StatusCode, out)
	}
	if _, page := e.do(t, http.MethodGet, "/team", e.a.Token, nil, ""); !strings.Contains(page, "second.py") {
		t.Error("an upload does not show on the next ask of the team page")
	}
	// Make the first version active again (it is the only passed one, so it
	// is active already): the page must say so, and say it of no other.
	if res, out := e.do(t, http.MethodPost, "/api/v1/submissions/1/activate", e.a.Token, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("activate: %d %s", res.StatusCode, out)
	}
	_, page := e.do(t, http.MethodGet, "/team", e.a.Token, nil, "")
	if n := strings.Count(page, `class="active"`); n != 1 {
		t.Errorf("%d active rows on the team page, want 1", n)
	}
	// Another team's page is its own.
	if _, page := e.do(t, http.MethodGet, "/team", e.b.Token, nil, ""); strings.Contains(page, "first.py") || !strings.Contains(page, "Beta") {
		t.Error("team B's page shows team A's page")
	}
}

// postLogin posts the login form to base with token, as a page of origin
// would ("": a client that says nothing of where it posts from).
func postLogin(c *http.Client, base, token, origin string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return c.Do(req)
}
