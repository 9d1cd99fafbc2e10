package event

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/BurntSushi/toml"
	units "github.com/docker/go-units"

	"github.com/arenabots/arena/harness/ladder"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/witness"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// ConfigFile is the event's configuration inside its directory.
const ConfigFile = "event.toml"

// Config is an event's configuration: event.toml.
type Config struct {
	Game  string `toml:"game"`
	Title string `toml:"title"`
	// Opens and Closes bound when uploads are taken; zero is no bound.
	Opens  Time `toml:"opens"`
	Closes Time `toml:"closes"`
	// Languages is a languages file (relative to the event directory); empty
	// is the built-in table.
	Languages string            `toml:"languages"`
	Rules     map[string]string `toml:"rules"`
	Limits    Limits            `toml:"limits"`
	Quotas    Quotas            `toml:"quotas"`
	Ladder    Ladder            `toml:"ladder"`
	// Log says what the event's log holds besides the final.
	Log Log `toml:"log"`
	// Validation says what an upload's validation requires.
	Validation Validation `toml:"validation"`
}

// Validation says what a submission must hold to pass its validation.
type Validation struct {
	// Require are the documents a submission must hold (rules.Docs): one
	// missing fails it; the others only warn. The default is what the
	// game's rules ask for (rules.Documents).
	Require []string `toml:"require"`
	// KeepFiles keeps each validation's unpacked files beside its report
	// (for the organizer to look at); by default they are removed once the
	// report is written: the upload itself is kept.
	KeepFiles bool `toml:"keep_files"`
}

// Log says which games the event's log holds (docs/verify.md): the
// final's always; the ladder's when Ladder is set, each as it is recorded.
// A scrimmage's games are never in it: only their two teams and the
// organizer see them.
type Log struct {
	Ladder bool `toml:"ladder"`
	// LadderAndScrimmages is the old name of ladder, still read with its
	// meaning now: the ladder's games only (ParseConfig sets Ladder from
	// it). Never set with ladder.
	LadderAndScrimmages bool `toml:"ladder_and_scrimmages"`
	// Witnesses are the witnesses (arena witness) the server asks to
	// cosign each checkpoint of the final's log, each "URL KEY": where it
	// answers and its key.
	Witnesses []string `toml:"witnesses"`
}

// Witness is a witness of the final's log, as [log] witnesses names it.
type Witness struct{ URL, Key string }

// ParseWitness reads "URL KEY": an http or https address and the
// witness's key (arena witness prints both).
func ParseWitness(s string) (Witness, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Witness{}, fmt.Errorf("witness %q: want \"URL KEY\", as arena witness prints them", s)
	}
	u, err := url.Parse(f[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Witness{}, fmt.Errorf("witness %q: %q is not an http or https address", s, f[0])
	}
	if _, err := witness.NewVerifier(f[1]); err != nil {
		return Witness{}, err
	}
	return Witness{URL: f[0], Key: f[1]}, nil
}

// WitnessList is the witnesses [log] witnesses names (checked by
// ParseConfig).
func (l Log) WitnessList() []Witness {
	var out []Witness
	for _, s := range l.Witnesses {
		if w, err := ParseWitness(s); err == nil {
			out = append(out, w)
		}
	}
	return out
}

// Ladder configures the rated ladder.
type Ladder struct {
	// Enabled keeps rated games going between the teams' active
	// submissions while uploads are open, when no scrimmage waits.
	Enabled bool `toml:"enabled"`
	// Share is the part of the player's time the ladder may take, from 0
	// (exclusive) to 1: after a pair that took d, the ladder waits
	// d*(1-share)/share before the next one. Scrimmages come first
	// always, and validations run beside it on their own workers.
	Share float64 `toml:"share"`
	// Far is the chance that a pair's opponent is drawn from every team
	// rather than from the nearest in rating (0 to 1): more meets teams far
	// apart sooner, the top ones among them.
	Far float64 `toml:"far"`
	// Openings, when set, are the positions ladder pairs start from (a
	// deck of the game's, or a file relative to the event directory, as
	// arena tournament --openings takes them), OpeningPlies the plies of
	// a PGN opening to play.
	Openings     string `toml:"openings"`
	OpeningPlies int    `toml:"opening_plies"`
	// KeepDataFiles is what a ladder game keeps of its bots' data files
	// (transcript.Keep*: all, changed, final, none).
	KeepDataFiles string `toml:"keep_data_files"`
	// EvidenceBudget caps the data-file bytes a ladder game adds to the
	// event's evidence (versions already kept by another game cost
	// nothing); versions beyond it are recorded by hash only. 0: no cap.
	EvidenceBudget Size `toml:"evidence_budget"`
}

// Limits are the bots' resources and the uploads' size.
type Limits struct {
	// TurnTimeout zero is the game's own per-turn limit.
	TurnTimeout  Duration `toml:"turn_timeout"`
	Memory       Size     `toml:"memory"`
	CPUs         float64  `toml:"cpus"`
	Pids         int64    `toml:"pids"`
	MaxPlies     int      `toml:"max_plies"`
	OnFault      string   `toml:"on_fault"`
	BuildTimeout Duration `toml:"build_timeout"`
	UploadSize   Size     `toml:"upload_size"`
}

// Quotas bound what one team may ask of the event.
type Quotas struct {
	UploadsPerHour int `toml:"uploads_per_hour"`
	// PendingValidations is how many of a team's uploads may wait for their
	// validation at once.
	PendingValidations int `toml:"pending_validations"`
	// ScrimmagesPerHour and PendingScrimmages bound a team's challenges.
	ScrimmagesPerHour int `toml:"scrimmages_per_hour"`
	PendingScrimmages int `toml:"pending_scrimmages"`
}

// DefaultConfig is the configuration of an event of game: every option at its
// default.
func DefaultConfig(game string) Config {
	lim := sandbox.DefaultLimits()
	return Config{Game: game, Rules: map[string]string{}, Limits: Limits{
		Memory: Size(lim.Memory), CPUs: lim.CPUs, Pids: lim.Pids, OnFault: string(referee.Forfeit),
		BuildTimeout: Duration(langs.BuildTimeout), UploadSize: 64 << 20,
	}, Quotas: Quotas{UploadsPerHour: 12, PendingValidations: 3,
		ScrimmagesPerHour: 6, PendingScrimmages: 2},
		Ladder:     Ladder{Enabled: true, Share: 1, Far: ladder.DefaultOptions.Far, KeepDataFiles: transcript.KeepChanged, EvidenceBudget: 16 << 20},
		Validation: Validation{Require: gameDocuments(game)}}
}

// gameDocuments are the documents game's rules ask for (none for a game
// that is not there: the configuration is refused for it anyway).
func gameDocuments(game string) []string {
	g, err := rules.Lookup(game)
	if err != nil {
		return []string{}
	}
	return rules.Documents(g)
}

// Duration is a time.Duration written as "5s" or "1m30s".
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as 5s or 1m30s, got %q", b)
	}
	if v < 0 {
		return fmt.Errorf("want a duration of 0 or more, got %q", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Size is a number of bytes written as "512MiB" or "10MB".
type Size int64

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := units.RAMInBytes(string(b))
	if err != nil || v <= 0 {
		return fmt.Errorf("want a size such as 512MiB, got %q", b)
	}
	*s = Size(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (s Size) MarshalText() ([]byte, error) { return []byte(units.BytesSize(float64(s))), nil }

// Time is an instant written in RFC 3339 ("2026-12-01T18:00:00+01:00"); the
// empty string is no time.
type Time struct{ time.Time }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Time) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339, string(b))
	if err != nil {
		return fmt.Errorf("want a time such as 2026-12-01T18:00:00+01:00, got %q", b)
	}
	t.Time = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (t Time) MarshalText() ([]byte, error) {
	if t.IsZero() {
		return nil, nil
	}
	return []byte(t.Format(time.RFC3339)), nil
}

// ConfigError is an event.toml that cannot be used: the line (0 when it is
// about the file as a whole) and the reason.
type ConfigError struct {
	File string
	Line int
	Err  error
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads DIR/event.toml: options it does not set keep their
// defaults; an unknown key, a value of the wrong kind, an unknown game, a
// rule option the game does not have and limits that cannot be enforced are
// refused with their line.
func LoadConfig(dir string) (Config, error) {
	path := filepath.Join(dir, ConfigFile)
	text, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(path, text)
}

// ParseConfig is LoadConfig of text read from path.
func ParseConfig(path string, text []byte) (Config, error) {
	bad := func(line int, err error) (Config, error) {
		return Config{}, &ConfigError{File: path, Line: line, Err: err}
	}
	// The game first: the defaults depend on it.
	var head struct {
		Game string `toml:"game"`
	}
	if _, err := toml.Decode(string(text), &head); err != nil {
		return bad(parseLine(err), parseReason(err))
	}
	if head.Game == "" {
		return bad(0, errors.New(`no game: set game = "NAME" (arena rules list)`))
	}
	if _, err := rules.Lookup(head.Game); err != nil {
		return bad(keyLine(text, "", "game"), err)
	}
	cfg := DefaultConfig(head.Game)
	md, err := toml.Decode(string(text), &cfg)
	if err != nil {
		return bad(parseLine(err), parseReason(err))
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		table, key := "", k[len(k)-1]
		if len(k) > 1 {
			table = strings.Join(k[:len(k)-1], ".")
		}
		return bad(keyLine(text, table, key), fmt.Errorf("unknown option %q (arena event init writes every option with its default)", k.String()))
	}
	if _, err := cfg.Settings().Resolve(); err != nil {
		return bad(settingLine(text, cfg, err), err)
	}
	switch {
	case !cfg.Opens.IsZero() && !cfg.Closes.IsZero() && !cfg.Closes.After(cfg.Opens.Time):
		return bad(keyLine(text, "", "closes"), fmt.Errorf("closes (%s) is not after opens (%s)", cfg.Closes.Format(time.RFC3339), cfg.Opens.Format(time.RFC3339)))
	case cfg.Limits.BuildTimeout <= 0:
		return bad(keyLine(text, "limits", "build_timeout"), errors.New("build_timeout must be positive"))
	case cfg.Quotas.UploadsPerHour < 1:
		return bad(keyLine(text, "quotas", "uploads_per_hour"), fmt.Errorf("uploads_per_hour must be 1 or more, got %d", cfg.Quotas.UploadsPerHour))
	case cfg.Quotas.PendingValidations < 1:
		return bad(keyLine(text, "quotas", "pending_validations"), fmt.Errorf("pending_validations must be 1 or more, got %d", cfg.Quotas.PendingValidations))
	case cfg.Quotas.ScrimmagesPerHour < 0:
		return bad(keyLine(text, "quotas", "scrimmages_per_hour"), fmt.Errorf("scrimmages_per_hour must be 0 (none) or more, got %d", cfg.Quotas.ScrimmagesPerHour))
	case cfg.Quotas.PendingScrimmages < 1:
		return bad(keyLine(text, "quotas", "pending_scrimmages"), fmt.Errorf("pending_scrimmages must be 1 or more, got %d", cfg.Quotas.PendingScrimmages))
	case !(cfg.Ladder.Share > 0 && cfg.Ladder.Share <= 1):
		return bad(keyLine(text, "ladder", "share"), fmt.Errorf("share must be more than 0 and at most 1, got %g", cfg.Ladder.Share))
	case !(cfg.Ladder.Far >= 0 && cfg.Ladder.Far <= 1):
		return bad(keyLine(text, "ladder", "far"), fmt.Errorf("far must be from 0 to 1, got %g", cfg.Ladder.Far))
	case transcript.ParseKeep(cfg.Ladder.KeepDataFiles) != nil:
		return bad(keyLine(text, "ladder", "keep_data_files"), fmt.Errorf("keep_data_files: want all, changed, final or none, got %q", cfg.Ladder.KeepDataFiles))
	}
	if md.IsDefined("log", "ladder_and_scrimmages") {
		if md.IsDefined("log", "ladder") {
			return bad(keyLine(text, "log", "ladder_and_scrimmages"), errors.New("ladder_and_scrimmages is the old name of ladder: set ladder only"))
		}
		cfg.Log.Ladder, cfg.Log.LadderAndScrimmages = cfg.Log.LadderAndScrimmages, false
	}
	for _, w := range cfg.Log.Witnesses {
		if _, err := ParseWitness(w); err != nil {
			return bad(keyLine(text, "log", "witnesses"), err)
		}
	}
	if cfg.Validation.Require == nil {
		cfg.Validation.Require = []string{} // "require = []": nothing
	}
	for _, d := range cfg.Validation.Require {
		if !slices.Contains(rules.Docs, d) {
			return bad(keyLine(text, "validation", "require"), fmt.Errorf("require: %q is no document a submission can be asked for (want %s)", d, strings.Join(rules.Docs, ", ")))
		}
	}
	if cfg.Ladder.Openings != "" {
		if _, err := cfg.LadderOpenings(filepath.Dir(path)); err != nil {
			return bad(keyLine(text, "ladder", "openings"), err)
		}
	} else if cfg.Ladder.OpeningPlies != 0 {
		return bad(keyLine(text, "ladder", "opening_plies"), errors.New("opening_plies is for openings: set openings too"))
	}
	if cfg.Languages != "" {
		if _, err := langs.Load(cfg.LanguagesFile(filepath.Dir(path))); err != nil {
			return bad(keyLine(text, "", "languages"), err)
		}
	}
	return cfg, nil
}

// LadderOpenings are the positions the ladder's pairs start from (nil
// without [ladder] openings), dir being the event's directory.
func (c Config) LadderOpenings(dir string) ([]rules.Opening, error) {
	if c.Ladder.Openings == "" {
		return nil, nil
	}
	g, err := rules.Lookup(c.Game)
	if err != nil {
		return nil, err
	}
	spec := c.Ladder.Openings
	if p := filepath.Join(dir, spec); !filepath.IsAbs(spec) {
		if _, err := os.Stat(p); err == nil {
			spec = p
		}
	}
	return rules.LoadOpenings(g, spec, c.Ladder.OpeningPlies, rules.Sequential, 0, c.Rules)
}

// Settings are the event's match settings, before they are checked.
func (c Config) Settings() settings.Settings {
	lim := sandbox.DefaultLimits()
	lim.Memory, lim.CPUs, lim.Pids = int64(c.Limits.Memory), c.Limits.CPUs, c.Limits.Pids
	return settings.Settings{Game: c.Game, Rules: c.Rules, MaxPlies: c.Limits.MaxPlies, Limits: lim,
		TurnTimeout: time.Duration(c.Limits.TurnTimeout), OnFault: c.Limits.OnFault}
}

// Intake are the limits an upload is read under: the upload size caps the
// archive as it does the request.
//
// What an upload unpacks to is capped at four times the upload size (at
// most the default 512 MiB): a validation holds its files in memory, so
// LadderEvidence is what a ladder game keeps of its bots' data files.
func (c Config) LadderEvidence() transcript.Evidence {
	return transcript.Evidence{Keep: c.Ladder.KeepDataFiles, Budget: int64(c.Ladder.EvidenceBudget)}
}

// this bounds its memory too.
func (c Config) Intake() submission.Limits {
	l := submission.DefaultLimits()
	l.MaxArchiveBytes = int64(c.Limits.UploadSize)
	l.MaxTotalBytes = min(l.MaxTotalBytes, 4*int64(c.Limits.UploadSize))
	l.MaxFileBytes = min(l.MaxFileBytes, l.MaxTotalBytes)
	return l
}

// LanguagesFile is the languages file's path, "" for the built-in table.
func (c Config) LanguagesFile(dir string) string {
	if c.Languages == "" || filepath.IsAbs(c.Languages) {
		return c.Languages
	}
	return filepath.Join(dir, c.Languages)
}

// Open says whether uploads are taken at t.
func (c Config) Open(t time.Time) bool {
	return (c.Opens.IsZero() || !t.Before(c.Opens.Time)) && (c.Closes.IsZero() || t.Before(c.Closes.Time))
}

// settingLine is the line of the option a SettingError is about.
func settingLine(text []byte, c Config, err error) int {
	var se *settings.SettingError
	if !errors.As(err, &se) {
		return 0
	}
	switch se.Setting {
	case "game":
		return keyLine(text, "", "game")
	case "max plies":
		return keyLine(text, "limits", "max_plies")
	case "turn timeout":
		return keyLine(text, "limits", "turn_timeout")
	case "on fault":
		return keyLine(text, "limits", "on_fault")
	case "limits":
		for _, k := range []string{"memory", "cpus", "pids"} {
			if strings.Contains(se.Err.Error(), strings.TrimSuffix(k, "s")) {
				return keyLine(text, "limits", k)
			}
		}
		return keyLine(text, "limits", "")
	case "rule":
		for name := range c.Rules {
			if strings.Contains(se.Err.Error(), name) {
				return keyLine(text, "rules", name)
			}
		}
		return keyLine(text, "rules", "")
	}
	return 0
}

var tableLine = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]`)

// keyLine is the line where key is set in table ("" is the top level), or
// the table's own line when key is "" or not found; 0 when neither is there.
func keyLine(text []byte, table, key string) int {
	current, tableAt := "", 0
	for i, l := range strings.Split(string(text), "\n") {
		if m := tableLine.FindStringSubmatch(l); m != nil {
			current = m[1]
			if current == table {
				tableAt = i + 1
			}
			continue
		}
		if current != table || key == "" {
			continue
		}
		k, _, ok := strings.Cut(strings.TrimSpace(l), "=")
		if ok && strings.Trim(strings.TrimSpace(k), `"'`) == key {
			return i + 1
		}
	}
	return tableAt
}

var lineOf = regexp.MustCompile(`line (\d+)`)

func parseLine(err error) int {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Position.Line
	}
	// A value of the wrong type is reported with its line in the message.
	if m := lineOf.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func parseReason(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return errors.New(pe.Error())
	}
	return err
}

var templateText = `# The configuration of an arena event (arena serve --event DIR reads it at
# start and refuses a bad file with the line and the reason). Every option is
# shown with its default.

# The game the event plays (arena rules list), and the title of its pages
# (empty: the game's name).
game = {{q .Game}}
title = ""

# When uploads open and close, in RFC 3339 ("2026-12-01T18:00:00+01:00");
# empty: no bound. The home page counts down to closes.
opens = ""
closes = ""

# How source submissions are built and run: a languages file relative to this
# directory (arena languages prints the built-in table); empty: built in.
languages = ""

# The game's rule options, as arena rules explain {{.Game}} lists them:
# name = "value". None set: the game's defaults.
[rules]
{{- range .Options}}
# {{.Name}} = {{q .Default}}{{if .Doc}}  # {{.Doc}}{{end}}
{{- end}}

[limits]
# The wall-clock limit of one turn; "0s": the game's own.
turn_timeout = {{q .Limits.TurnTimeout}}
# Memory, CPUs and processes of each bot's sandbox.
memory = {{q .Limits.Memory}}
cpus = {{.Limits.CPUs}}
pids = {{.Limits.Pids}}
# The game's length limit in plies; 0: the game's own.
max_plies = {{.Limits.MaxPlies}}
# What a faulty turn costs: forfeit (the game) or random-move.
on_fault = {{q .Limits.OnFault}}
# The wall-clock limit of one build of a source submission.
build_timeout = {{q .Limits.BuildTimeout}}
# The largest upload taken (the request and the archive).
upload_size = {{q .Limits.UploadSize}}

[quotas]
# Uploads one team may make in an hour.
uploads_per_hour = {{.Quotas.UploadsPerHour}}
# Uploads of one team that may wait for their validation at once.
pending_validations = {{.Quotas.PendingValidations}}
# Scrimmages (a pair of unrated games against a chosen rival) one team may
# ask for in an hour (0: none), and may have waiting at once.
scrimmages_per_hour = {{.Quotas.ScrimmagesPerHour}}
pending_scrimmages = {{.Quotas.PendingScrimmages}}

[log]
# The event's signed, append-only log holds every game of the final (see
# docs/verify.md); true appends each ladder game too, as it is recorded, so
# that teams can check those from the published log as well. Scrimmages are
# never logged: only their two teams and the organizer see them. (The old
# name of this option, ladder_and_scrimmages, is still read, with this
# meaning: the ladder's games only.)
ladder = {{.Log.Ladder}}
# Witnesses (arena witness, run by teams or anyone they trust) the server
# asks to cosign each checkpoint of the final's log, each "URL KEY" as the
# witness printed them: arena verify --witness KEY --quorum N then checks
# the published final was seen by them. None by default.
# witnesses = ["http://witness.example.org:8090 team-ant+1a2b3c4d+BASE64KEY"]

[ladder]
# Keep rated games (Glicko-2) going between the teams' active submissions
# while uploads are open, a pair with sides swapped at a time, whenever no
# scrimmage waits.
enabled = {{.Ladder.Enabled}}
# The part of the games player's time the ladder may take (more than 0, at
# most 1): after a pair that took a minute, 0.25 waits three minutes before
# the next. Scrimmages always come first.
share = {{.Ladder.Share}}
# The chance that a pair's opponent is drawn from every team rather than the
# six nearest in rating (0 to 1), so that teams far apart meet too.
far = {{.Ladder.Far}}
# Positions the pairs start from, sides swapped (games that have openings,
# as arena tournament --openings takes them: a deck such as checkers' acf3,
# or a file relative to this directory); two submissions that meet again
# start from the next one. Empty: the game's own start, and two
# deterministic bots that met in both colours are not paired again.
openings = ""
# With PGN openings: the position after this many half-moves (0: the last).
opening_plies = {{.Ladder.OpeningPlies}}
# What a ladder game keeps of the bots' data files as evidence: changed or
# all (every distinct version: every turn can be run again in a dispute),
# final (each side's last version: a turn that began with an earlier one
# cannot be run again), none (hashes only: no turn after a bot's first data
# file can). Every version's hash is recorded whatever this says. Each
# version is stored once for the whole event (evidence/), compressed, and
# linked into the games that hold it.
keep_data_files = {{q .Ladder.KeepDataFiles}}
# The data-file bytes one ladder game may add to the event's evidence
# (versions another game already kept cost nothing); past it, versions are
# recorded by hash only and the turns that needed them cannot be run again.
# 0: no cap.
evidence_budget = {{q .Ladder.EvidenceBudget}}

[validation]
# The documents a submission must hold to pass: "source" (its source
# files), "readme" (a README.md or README.txt). One missing fails the
# submission; a document not listed only warns when missing. The default is
# what the game's rules ask for.
require = [{{range $i, $d := .Validation.Require}}{{if $i}}, {{end}}{{q $d}}{{end}}]
# Keep each validation's unpacked files beside its report, to look at; by
# default they are removed once the report is written (the upload is kept).
keep_files = {{.Validation.KeepFiles}}
`

// Template is the text of a new event.toml for game: every option commented,
// at its default, and the game's rule options listed commented out.
func Template(game string) ([]byte, error) {
	g, err := rules.Lookup(game)
	if err != nil {
		return nil, err
	}
	type option struct{ Name, Default, Doc string }
	var opts []option
	for _, o := range g.Options() {
		opts = append(opts, option{Name: o.Name, Default: o.Default, Doc: o.Doc})
	}
	sort.Slice(opts, func(i, j int) bool { return opts[i].Name < opts[j].Name })
	t := template.Must(template.New("event.toml").Funcs(template.FuncMap{"q": func(v any) string {
		if m, ok := v.(interface{ MarshalText() ([]byte, error) }); ok {
			b, _ := m.MarshalText()
			v = string(b)
		}
		return fmt.Sprintf("%q", v)
	}}).Parse(templateText))
	var buf bytes.Buffer
	err = t.Execute(&buf, struct {
		Config
		Options []option
	}{DefaultConfig(game), opts})
	return buf.Bytes(), err
}
