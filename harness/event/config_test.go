package event

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/arenabots/arena/rules/games"
)

func TestTheTemplateParsesToTheDefaults(t *testing.T) {
	for _, game := range []string{"codeclash", "chess", "checkers", "acm6x6", "tiles"} {
		text, err := Template(game)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := ParseConfig("event.toml", text)
		if err != nil {
			t.Fatalf("%s: the template does not parse: %v\n%s", game, err, text)
		}
		d := DefaultConfig(game)
		if cfg.Game != game || cfg.Limits != d.Limits || cfg.Quotas != d.Quotas || cfg.Ladder != d.Ladder || len(cfg.Rules) != 0 ||
			!slices.Equal(cfg.Validation.Require, d.Validation.Require) {
			t.Errorf("%s: the template reads as %+v, want the defaults %+v", game, cfg, d)
		}
		// The documents required by default are the game's own: Code
		// Clash's rules ask for the source and a README, the others none.
		want := []string{}
		if game == "codeclash" {
			want = []string{"source", "readme"}
		}
		if !slices.Equal(cfg.Validation.Require, want) {
			t.Errorf("%s: requires %q by default, want %q", game, cfg.Validation.Require, want)
		}
	}
}

func TestABadConfigIsRefusedWithItsLine(t *testing.T) {
	base := "game = \"codeclash\"\n\n[limits]\nmemory = \"512MiB\"\n"
	for _, c := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"unknown key", base + "colour = \"red\"\n", 5, `unknown option "limits.colour"`},
		{"unknown top key", "game = \"codeclash\"\nteams = 3\n", 2, `unknown option "teams"`},
		{"bad duration", base + "turn_timeout = \"five seconds\"\n", 5, "want a duration"},
		{"bad size", base + "upload_size = \"huge\"\n", 5, "want a size"},
		{"unknown game", "game = \"go\"\n", 1, "go"},
		{"no game", "title = \"x\"\n", 0, "no game"},
		{"unknown rule", base + "[rules]\nfog = \"on\"\n", 6, "fog"},
		{"bad rule value", "game = \"chess\"\n[rules]\nmax-plies = \"many\"\n", 3, "max-plies"},
		{"too little memory", "game = \"codeclash\"\n[limits]\nmemory = \"1MiB\"\n", 3, "memory"},
		{"bad toml", "game = \"codeclash\"\ncpus = = 1\n", 2, ""},
		{"wrong type", base + "cpus = \"one\"\n", 5, ""},
		{"closes before opens", "game = \"codeclash\"\nopens = \"2026-12-02T00:00:00Z\"\ncloses = \"2026-12-01T00:00:00Z\"\n", 3, "not after"},
		{"zero quota", "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 0\n", 3, "uploads_per_hour"},
		{"ladder share", "game = \"codeclash\"\n[ladder]\nshare = 1.5\n", 3, "share must be"},
		{"no ladder share", "game = \"codeclash\"\n[ladder]\nshare = 0\n", 3, "share must be"},
		{"unknown document", "game = \"codeclash\"\n[validation]\nrequire = [\"readme\", \"licence\"]\n", 3, `"licence" is no document`},
		{"evidence policy", "game = \"codeclash\"\n[ladder]\nkeep_data_files = \"most\"\n", 3, "keep_data_files"},
		{"no such deck", "game = \"checkers\"\n[ladder]\nopenings = \"acf9\"\n", 3, "acf9"},
		{"plies without openings", "game = \"chess\"\n[ladder]\nopening_plies = 4\n", 3, "set openings too"},
		{"a log option by both its names", "game = \"codeclash\"\n[log]\nladder = true\nladder_and_scrimmages = true\n", 4, "set ladder only"},
		{"a witness without its key", "game = \"codeclash\"\n[log]\nwitnesses = [\"http://w.example\"]\n", 3, `want "URL KEY"`},
		{"a witness's key a log's", "game = \"codeclash\"\n[log]\nwitnesses = [\"http://w.example arena/x+3f3d6df1+AYqDUdhDhsJNAY6QZ4kDbQ4wIE2ywtL5QpOdsPu2i+S/\"]\n", 3, "not a cosignature/v1"},
		{"a witness not over http", "game = \"codeclash\"\n[log]\nwitnesses = [\"ftp://w.example team+1a2b3c4d+AQ==\"]\n", 3, "not an http or https address"},
	} {
		_, err := ParseConfig("event.toml", []byte(c.text))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: got %v, want a ConfigError", c.name, err)
			continue
		}
		if ce.Line != c.line || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %q (line %d), want line %d saying %q", c.name, err, ce.Line, c.line, c.want)
		}
	}
}

func TestTheConfigSetsTheEvent(t *testing.T) {
	text := "game = \"codeclash\"\ncloses = \"2026-12-01T18:00:00+01:00\"\n[limits]\nturn_timeout = \"3s\"\nmemory = \"256MiB\"\nupload_size = \"10MiB\"\n"
	cfg, err := ParseConfig("event.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.Limits.TurnTimeout != 3*time.Second || r.Limits.Memory != 256<<20 || cfg.Intake().MaxArchiveBytes != 10<<20 {
		t.Errorf("limits %+v, intake %+v", r.Limits, cfg.Intake())
	}
	deadline := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	if !cfg.Open(deadline.Add(-time.Second)) || cfg.Open(deadline) {
		t.Errorf("uploads are not open until exactly the deadline")
	}
}

// [log] ladder logs the ladder's games; its old name,
// ladder_and_scrimmages, is read with the same meaning: the ladder's games
// only, never a scrimmage's.
func TestTheLogOptionKeepsItsOldName(t *testing.T) {
	for text, want := range map[string]bool{
		"game = \"codeclash\"\n":                                       false,
		"game = \"codeclash\"\n[log]\nladder = true\n":                 true,
		"game = \"codeclash\"\n[log]\nladder = false\n":                false,
		"game = \"codeclash\"\n[log]\nladder_and_scrimmages = true\n":  true,
		"game = \"codeclash\"\n[log]\nladder_and_scrimmages = false\n": false,
	} {
		cfg, err := ParseConfig("event.toml", []byte(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if cfg.Log.Ladder != want || cfg.Log.LadderAndScrimmages || len(cfg.Log.Witnesses) != 0 {
			t.Errorf("%q reads as %+v, want the ladder's games logged: %v", text, cfg.Log, want)
		}
	}
}

func TestAnEventMayRelaxTheDocumentsItRequires(t *testing.T) {
	for text, want := range map[string][]string{
		"game = \"codeclash\"\n[validation]\nrequire = []\n":           {},
		"game = \"codeclash\"\n[validation]\nrequire = [\"source\"]\n": {"source"},
		"game = \"checkers\"\n[validation]\nrequire = [\"readme\"]\n":  {"readme"},
		"game = \"codeclash\"\n[validation]\n":                         {"source", "readme"},
	} {
		cfg, err := ParseConfig("event.toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Validation.Require == nil || !slices.Equal(cfg.Validation.Require, want) {
			t.Errorf("%q: requires %#v, want %q", text, cfg.Validation.Require, want)
		}
	}
}
