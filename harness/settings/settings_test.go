package settings_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/settings"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/sandbox"
)

// Settings are checked once, the same for every command: the game, its
// options, the length limit, the per-turn limit (a line game's move time)
// and the fault policy, each refusal naming its setting.
func TestSettingsResolve(t *testing.T) {
	t.Parallel()
	base := func(game string) settings.Settings {
		return settings.Settings{Game: game, Limits: sandbox.DefaultLimits()}
	}
	with := func(s settings.Settings, f func(*settings.Settings)) settings.Settings { f(&s); return s }

	// A line game's move time follows an explicit turn limit, even one
	// equal to the default; unset, the game's own holds.
	for _, d := range []time.Duration{5 * time.Second, 3 * time.Second} {
		r, err := with(base("chess"), func(s *settings.Settings) { s.TurnTimeout = d }).Resolve()
		if err != nil || r.Rules["moveTime"] != d.String() || r.Limits.TurnTimeout != d {
			t.Fatalf("turn timeout %v: %v, rules %v, limits %+v", d, err, r.Rules, r.Limits)
		}
	}
	r, err := base("chess").Resolve()
	if err != nil || r.Rules["moveTime"] != "" || r.OnFault != referee.Forfeit {
		t.Fatalf("chess with no settings: %v %v %v", err, r.Rules, r.OnFault)
	}
	// The length limit sets the game's own option, whatever its name.
	r, err = with(base("codeclash"), func(s *settings.Settings) { s.MaxPlies = 16 }).Resolve()
	if err != nil || r.Rules["maxPlies"] != "16" {
		t.Fatalf("max plies: %v %v", err, r.Rules)
	}

	for _, c := range []struct {
		name    string
		s       settings.Settings
		setting string
		want    string
	}{
		{"an unknown game", base("go"), "game", "go"},
		{"an unknown option", with(base("codeclash"), func(s *settings.Settings) { s.Rules = map[string]string{"fog": "1"} }), "rule", `"fog"`},
		{"a bad option value", with(base("codeclash"), func(s *settings.Settings) { s.Rules = map[string]string{"maxPlies": "0"} }), "rule", "maxPlies"},
		{"a turn limit a rule contradicts", with(base("chess"), func(s *settings.Settings) {
			s.TurnTimeout = 5 * time.Second
			s.Rules = map[string]string{"moveTime": "1s"}
		}), "turn timeout", "moveTime=1s"},
		{"a length limit a rule contradicts", with(base("codeclash"), func(s *settings.Settings) {
			s.MaxPlies = 10
			s.Rules = map[string]string{"maxPlies": "12"}
		}), "max plies", "maxPlies=12"},
		{"a length limit for a game without one", with(base("tiles"), func(s *settings.Settings) { s.MaxPlies = 10 }), "max plies", "tiles has no rule option for it"},
		{"no memory", with(base("codeclash"), func(s *settings.Settings) { s.Limits.Memory = 0 }), "limits", "memory"},
		{"an unknown fault policy", with(base("codeclash"), func(s *settings.Settings) { s.OnFault = "retry" }), "on fault", "retry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.s.Resolve()
			var bad *settings.SettingError
			if !errors.As(err, &bad) || bad.Setting != c.setting || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a %q setting error saying %q", err, c.setting, c.want)
			}
		})
	}
}
