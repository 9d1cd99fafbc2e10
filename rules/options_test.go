package rules_test

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games"
)

// Every registered game states its rule options once, in an OptionTable, and
// the table agrees with itself: parsing nothing gives the defaults, which Map
// writes back as the list says, each listed default parses, and each bounded
// option refuses values out of bounds with a message naming it.
func TestEveryGamesOptionTable(t *testing.T) {
	if len(rules.Names()) < 5 {
		t.Fatalf("registered games: %v", rules.Names())
	}
	for _, name := range rules.Names() {
		t.Run(name, func(t *testing.T) {
			g, err := rules.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			tg, ok := g.(rules.OptionTabler)
			if !ok {
				t.Fatal("the game's options are not an OptionTable")
			}
			table := tg.OptionTable()
			if !reflect.DeepEqual(g.Options(), table.Options()) {
				t.Fatalf("Options() %+v, the table's %+v", g.Options(), table.Options())
			}
			defaults := map[string]string{}
			for _, o := range g.Options() {
				defaults[o.Name] = o.Default
			}
			if got, err := table.Canonical(nil); err != nil || !maps.Equal(got, defaults) {
				t.Fatalf("no options parse to %v (%v), want the listed defaults %v", got, err, defaults)
			}
			for _, o := range g.Options() {
				if got, err := table.Canonical(map[string]string{o.Name: o.Default}); err != nil || !maps.Equal(got, defaults) {
					t.Errorf("%s=%q, its default, parses to %v (%v)", o.Name, o.Default, got, err)
				}
				for _, bad := range table.Invalid(o.Name) {
					opts := map[string]string{o.Name: bad}
					if _, err := table.Canonical(opts); err == nil || !strings.HasPrefix(err.Error(), o.Name+": ") {
						t.Errorf("%s=%q: %v, want it refused with a message naming %s", o.Name, bad, err, o.Name)
					}
					if _, err := g.New(opts, 1); err == nil {
						t.Errorf("%s=%q: New accepted it", o.Name, bad)
					}
				}
			}
			want := fmt.Sprintf("%s has no rule option %q (options: ", name, "noSuchOption")
			if _, err := table.Canonical(map[string]string{"noSuchOption": "1"}); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("an unknown option: %v, want %q", err, want)
			}
		})
	}
}

// The kinds' messages are those users saw before the tables, and durations
// are written back as the defaults are.
func TestOptionKinds(t *testing.T) {
	for _, c := range []struct {
		game string
		opts map[string]string
		want string // the error, or the canonical value of the one option
	}{
		{"codeclash", map[string]string{"blockedTilesInPlay": "maybe"}, `blockedTilesInPlay: want true or false, got "maybe"`},
		{"codeclash", map[string]string{"blockedTilesInPlay": "1"}, "true"},
		{"codeclash", map[string]string{"noMoveResult": "win"}, `noMoveResult: want draw or loss, got "win"`},
		{"codeclash", map[string]string{"maxPlies": "0"}, `maxPlies: want a number from 1 to 100000, got "0"`},
		{"codeclash", map[string]string{"repetition": "1"}, `repetition: want 0 (off) or a count from 2 to 100, got "1"`},
		{"chess", map[string]string{"moveTime": "0s"}, `moveTime: want a positive duration such as 90s, got "0s"`},
		{"chess", map[string]string{"gameTime": "2m"}, "120s"},
		{"chess", map[string]string{"moveTime": "1.5s"}, "1500ms"},
		{"chess", map[string]string{"moveTime": "1500us"}, "1.5ms"},
		{"tiles", map[string]string{"map": "0,1,2\nE,E,E\nE,E\nE,E,E\n"}, "map: line 3: 2 cells, want 3"},
	} {
		g, _ := rules.Lookup(c.game)
		got, err := g.(rules.OptionTabler).OptionTable().Canonical(c.opts)
		for name := range c.opts {
			if err == nil && got[name] != c.want || err != nil && err.Error() != c.want {
				t.Errorf("%s %v: %q, %v; want %q", c.game, c.opts, got[name], err, c.want)
			}
		}
	}
}
