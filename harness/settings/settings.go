package settings

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Settings are how matches are to be played, as a command's flags or an
// event's configuration say it, before they are checked: the one reading of
// a game, its rule options, the per-turn limit and the fault policy that
// match, tournament, validate and a server share.
type Settings struct {
	Game  string            // a registered game's name
	Rules map[string]string // rule options by name (values, not @FILE)
	// MaxPlies, when above 0, sets the game's length limit (its
	// rules.PlyLimitOption); a game without one refuses it.
	MaxPlies int
	// Limits are the bots' resources, every field set (start from
	// sandbox.DefaultLimits).
	Limits sandbox.Limits
	// TurnTimeout, when set, is the per-turn limit: Limits.TurnTimeout, and
	// for a line game its move-time rule (a --rule that says otherwise is
	// refused).
	TurnTimeout time.Duration
	OnFault     string // forfeit (default) or random-move
}

// Resolved are Settings checked: what a match.Config and a tournament are
// built from.
type Resolved struct {
	Game    rules.Game
	Rules   map[string]string
	Limits  sandbox.Limits
	OnFault referee.Policy
}

// SettingError is a setting that cannot be played, naming the setting.
type SettingError struct {
	Setting string // "game", "rule", "max plies", "turn timeout", "limits", "on fault"
	Err     error
}

func (e *SettingError) Error() string { return e.Setting + ": " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// Resolve checks the settings: the game is known, every rule option is the
// game's and has a value it accepts (a game is set up with them), the limits
// are sound and the policy is known.
func (s Settings) Resolve() (Resolved, error) {
	var r Resolved
	bad := func(setting string, err error) (Resolved, error) { return r, &SettingError{setting, err} }
	g, err := rules.Lookup(s.Game)
	if err != nil {
		return bad("game", err)
	}
	opts := maps.Clone(s.Rules)
	if opts == nil {
		opts = map[string]string{}
	}
	if err := rules.CheckOptions(g, opts); err != nil {
		return bad("rule", err)
	}
	if s.MaxPlies > 0 {
		if err := setRule(g, opts, rules.PlyLimitOption(g), strconv.Itoa(s.MaxPlies)); err != nil {
			return bad("max plies", err)
		}
	}
	lim := s.Limits
	if s.TurnTimeout != 0 {
		lim.TurnTimeout = s.TurnTimeout
		if lp := g.Protocol().Lines; lp != nil {
			// A line game's answers are timed by its move-time rule.
			if err := setRule(g, opts, lp.MoveTimeOption, s.TurnTimeout.String()); err != nil {
				return bad("turn timeout", err)
			}
		}
	}
	if err := lim.Validate(); err != nil {
		return bad("limits", err)
	}
	// Every option is checked before anything runs: a bad value (a map
	// that is not square, say) is refused here with its reason.
	if _, err := g.New(opts, 0); err != nil {
		return bad("rule", err)
	}
	pol := referee.Forfeit
	if s.OnFault != "" {
		if pol, err = referee.ParsePolicy(s.OnFault); err != nil {
			return bad("on fault", err)
		}
	}
	return Resolved{Game: g, Rules: opts, Limits: lim, OnFault: pol}, nil
}

// setRule sets a rule option a setting stands for, refusing a rule that says
// otherwise.
func setRule(g rules.Game, opts map[string]string, name, value string) error {
	if name == "" {
		return fmt.Errorf("%s has no rule option for it", g.Name())
	}
	if v, ok := opts[name]; ok && v != value {
		return fmt.Errorf("it sets the rule %s=%s, but the rules say %s=%s", name, value, name, v)
	}
	opts[name] = value
	return nil
}
