package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// outlookRows is how many of the teams that would play the organizer's
// page lists: a thousand rows were most of its drawing.
const outlookRows = 100

var funcs = template.FuncMap{
	"short":   short,
	"when":    when,
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"bytes":   size,
	"done":    event.Done,
	"pretty":  prettyJSON,
	"inc":     func(n int) int { return n + 1 },
	"sub":     func(a, b int) int { return a - b },
	// tenths writes a number of a drawing (a plot's) to a tenth.
	"tenths": func(v float64) string { return string(appendTenths(nil, v)) },
	// half writes points as a score sheet does: 1½, ½, 2.
	"half": func(p float64) string {
		whole, frac := math.Modf(p)
		switch {
		case frac == 0:
			return strconv.Itoa(int(whole))
		case whole == 0:
			return "½"
		}
		return strconv.Itoa(int(whole)) + "½"
	},
	"heap":  build.HeapMiB,
	"dec":   func(n int) int { return n - 1 },
	"elo":   tournament.FormatElo,
	"ranks": tournament.FormatRanks,
	// A standings table's tie-break columns, their headings, a row's
	// value of one, and the order they apply in, in words.
	"tieColumns": tournament.TieBreakColumns,
	"tieLabel":   tournament.TieBreakLabel,
	"tie":        func(r tournament.Row, name string) float64 { return r.TieBreak(name) },
	"tieWords":   tournament.TieBreakWords,
	// about says a duration as a person plans with it ("about 43 h").
	"about": event.About,
	"ms":    func(d time.Duration) int64 { return d.Milliseconds() },
	// describe says a final's shape for its teams ("swiss, 11 rounds").
	"describe":     func(s event.Shape, teams int) string { return s.Describe(teams) },
	"finalFormats": event.FinalFormats,
	// foldPast is the longest list of teams a page shows unfolded: a
	// longer one is folded under its count.
	"foldPast":    func() int { return 20 },
	"outlookRows": func() int { return outlookRows },
	// firstEntries are the first outlookRows of a list of teams: the
	// template ranges over them, not over a thousand to skip the rest.
	"firstEntries":  func(list []event.FinalEntry) []event.FinalEntry { return list[:min(len(list), outlookRows)] },
	"secondStages":  tournament.SecondStages,
	"formatPlayoff": tournament.FormatPlayoff,
	"playoffWords":  tournament.PlayoffWords,
	// words says a format's name as words: "double elimination".
	"words": func(format string) string { return strings.ReplaceAll(format, "-", " ") },
	// sentence ends free text (a reason, a summary) with one full stop:
	// none is added to text that ends with its own.
	"sentence": sentence,
	// capital starts text with a capital letter: a reason written to
	// follow "because" read as a sentence of its own.
	"capital": func(text string) string {
		r, n := utf8.DecodeRuneInString(text)
		if r == utf8.RuneError {
			return text
		}
		return string(unicode.ToUpper(r)) + text[n:]
	},
}

// short is the start of a hash, as the pages show one.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// size writes a number of bytes as people read it: "1.5 MiB".
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// when writes a time as every page shows it: in UTC to the second ("" for
// none).
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// sentence is text ending with a full stop, unless it ends with a stop,
// a question or an exclamation mark already.
func sentence(text string) string {
	t := strings.TrimRight(text, " \t\r\n")
	if t == "" || strings.HasSuffix(t, ".") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "?") {
		return t
	}
	return t + "."
}

// pages are the templates, each page with the layout.
var pages = func() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html"))
	out := map[string]*template.Template{}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" || base == "parts.html" {
			continue
		}
		out[strings.TrimSuffix(base, ".html")] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, n))
	}
	return out
}()

// pageSizes are how long each page was when last drawn: its next drawing
// starts with room for as much, where a team's page would otherwise grow
// its buffer eight times.
var pageSizes = func() map[string]*atomic.Int64 {
	out := map[string]*atomic.Int64{}
	for name := range pages {
		out[name] = new(atomic.Int64)
	}
	return out
}()

// pageData is what every page is rendered from.
type pageData struct {
	Title     string
	Event     event.Config
	GameTitle string
	Who       *event.Principal
	TeamName  string
	CSRF      string
	Data      any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, p *event.Principal, status int, page, title string, data any) error {
	body, err := s.pageBytes(r, p, page, title, data)
	if err != nil {
		return err
	}
	pageHeader(w)
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}

// pageBytes renders a page with the layout.
func (s *Server) pageBytes(r *http.Request, p *event.Principal, page, title string, data any) ([]byte, error) {
	t := pages[page]
	if t == nil {
		return nil, fmt.Errorf("no page %q", page)
	}
	pd := pageData{Title: title, Event: s.Config, GameTitle: s.Game.Title(), Who: p, Data: data}
	if pd.Event.Title == "" {
		pd.Event.Title = s.Game.Title()
	}
	if csrf, ok := r.Context().Value(csrfKey{}).(string); ok {
		pd.CSRF = csrf
	}
	if p != nil {
		pd.TeamName = p.Name
	}
	var buf bytes.Buffer
	size := pageSizes[page]
	last := int(size.Load())
	buf.Grow(last + last/8) // a page a little longer than the last grows no more
	if err := t.ExecuteTemplate(&buf, "layout.html", pd); err != nil {
		return nil, err
	}
	size.Store(int64(buf.Len()))
	return buf.Bytes(), nil
}

// fragment renders the template name of page: a part of the page (a
// table, a paragraph) that a page's script or another page asks for.
func fragment(page, name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := pages[page].ExecuteTemplate(&buf, name, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// drawn is the template name of page drawn from data, as a part another
// page's template writes as it is (a games table, a board): drawn once,
// kept, and written into many pages.
func drawn(page, name string, data any) (template.HTML, error) {
	body, err := fragment(page, name, data)
	if err != nil {
		return "", err
	}
	return executed(string(body)), nil
}

// executed is what an html/template wrote (drawn just now, or kept since a
// drawing: a games table in the lists' cache), as a value a template writes
// without escaping it again. It is the one conversion to template.HTML of
// the pages, and its only callers pass it a template's output: every text
// in it was escaped by the template that wrote it.
func executed(out string) template.HTML { return template.HTML(out) }

// writeFragment answers with the template name of page drawn from data:
// the part of a page its script asks for again.
func writeFragment(w http.ResponseWriter, page, name string, data any) error {
	body, err := fragment(page, name, data)
	if err != nil {
		return err
	}
	return writePage(w, body)
}

// renderError is the page of an error: its sentence, and the way on.
func renderError(w http.ResponseWriter, he *httpError) {
	var buf bytes.Buffer
	err := pages["error"].ExecuteTemplate(&buf, "layout.html", pageData{Title: http.StatusText(he.status), Data: he.message,
		Event: event.Config{Title: "arena"}})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(he.status)
	if err != nil {
		fmt.Fprintf(w, "%d %s", he.status, template.HTMLEscapeString(he.message))
		return
	}
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) static(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	name := r.PathValue("file")
	data, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		return &httpError{http.StatusNotFound, "not_found", "no such file"}
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, err = w.Write(data)
	return err
}

// prettyJSON is a state given to a bot as a person reads it: JSON indented
// (the turn's exact bytes are in the transcript); anything else as it is.
func prettyJSON(s string) string {
	var b strings.Builder
	if err := writePretty(&b, json.RawMessage(strings.TrimSpace(s)), ""); err != nil {
		return s
	}
	return b.String()
}

// prettyLine is the widest a JSON array is written on one line.
const prettyLine = 72

// writePretty writes JSON as a person reads a game's state: an object a key
// a line, in its own order; an array of plain values (a board's row) on
// one line when it fits, an array of such rows a row a line.
func writePretty(b *strings.Builder, raw json.RawMessage, indent string) error {
	switch {
	case len(raw) > 0 && raw[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteString("{")
		first := true
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if !first {
				b.WriteString(",")
			}
			first = false
			k, err := json.Marshal(key)
			if err != nil {
				return err
			}
			b.WriteString("\n" + indent + "  " + string(k) + ": ")
			if err := writePretty(b, v, indent+"  "); err != nil {
				return err
			}
		}
		if !first {
			b.WriteString("\n" + indent)
		}
		b.WriteString("}")
		return nil
	case len(raw) > 0 && raw[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return err
		}
		var one bytes.Buffer
		if err := json.Compact(&one, raw); err != nil {
			return err
		}
		if flat(elems) && one.Len() <= prettyLine {
			b.Write(one.Bytes())
			return nil
		}
		b.WriteString("[")
		for i, e := range elems {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  ")
			if err := writePretty(b, e, indent+"  "); err != nil {
				return err
			}
		}
		if len(elems) > 0 {
			b.WriteString("\n" + indent)
		}
		b.WriteString("]")
		return nil
	}
	var one bytes.Buffer
	if err := json.Compact(&one, raw); err != nil {
		return err
	}
	b.Write(one.Bytes())
	return nil
}

// flat says whether every element is a plain value or an empty container.
func flat(elems []json.RawMessage) bool {
	for _, e := range elems {
		if t := bytes.TrimSpace(e); len(t) > 2 && (t[0] == '[' || t[0] == '{') {
			return false
		}
	}
	return true
}
