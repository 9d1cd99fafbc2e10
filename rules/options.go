package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A game states each rule option once, as a row of an OptionTable: its name,
// default, help text, the kind of value it takes and the field of the game's
// options struct it sets. The list Game.Options shows, the parsing with its
// bounds, the defaults and the map a transcript records are all read from that
// row.

// OptionKind is the kind of value a rule option takes: how its text is read
// into the field it sets (bounds included), how the field is written back,
// and how help text names the accepted values. Make one with Bool, Int,
// Repetition, OneOf, Duration, Text or NewKind.
type OptionKind struct {
	values  string               // for help text: "true|false", "1-100"
	invalid []string             // texts parse must refuse, for tests
	fits    func(field any) bool // whether field is a pointer of the kind's type
	set     func(field any, text string) error
	check   func(field any) error // bounds of the value held; nil: none
	format  func(field any) string
}

// NewKind makes the kind of an option that sets a field of type V: parse reads
// the text (its error says what is wanted, without the option's name), format
// writes a value back so that parse reads it again, and values names the
// accepted values for help text. invalid lists texts parse refuses, which the
// registry's test tries. Values set in code are not checked (see
// OptionTable.Check).
func NewKind[V any](values string, parse func(string) (V, error), format func(V) string, invalid ...string) OptionKind {
	return OptionKind{
		values:  values,
		invalid: invalid,
		fits:    func(field any) bool { _, ok := field.(*V); return ok },
		set: func(field any, text string) error {
			v, err := parse(text)
			if err == nil {
				*field.(*V) = v
			}
			return err
		},
		format: func(field any) string { return format(*field.(*V)) },
	}
}

// within makes the kind of an option whose text read reads and whose value ok
// accepts; a text either refuses is answered "want <want>, got <text>".
func within[V any](values, want string, read func(string) (V, error), ok func(V) bool, format func(V) string, invalid ...string) OptionKind {
	refuse := func(text string) error { return fmt.Errorf("want %s, got %q", want, text) }
	parse := func(text string) (V, error) {
		v, err := read(text)
		if err != nil || !ok(v) {
			return v, refuse(text)
		}
		return v, nil
	}
	k := NewKind(values, parse, format, invalid...)
	k.check = func(field any) error {
		if v := *field.(*V); !ok(v) {
			return refuse(format(v))
		}
		return nil
	}
	return k
}

// Bool is true or false (as strconv.ParseBool reads them); it sets a *bool.
func Bool() OptionKind {
	return within("true|false", "true or false", strconv.ParseBool,
		func(bool) bool { return true }, strconv.FormatBool, "maybe")
}

// Int is a whole number from lo to hi; it sets an *int.
func Int(lo, hi int) OptionKind {
	return within(fmt.Sprintf("%d-%d", lo, hi), fmt.Sprintf("a number from %d to %d", lo, hi), strconv.Atoi,
		func(n int) bool { return n >= lo && n <= hi }, strconv.Itoa,
		strconv.Itoa(lo-1), strconv.Itoa(hi+1), "x")
}

// Repetition is a repetition count: 0 (off) or 2 to hi; it sets an *int.
func Repetition(hi int) OptionKind {
	return within(fmt.Sprintf("0 or 2-%d", hi), fmt.Sprintf("0 (off) or a count from 2 to %d", hi), strconv.Atoi,
		func(n int) bool { return n == 0 || n >= 2 && n <= hi }, strconv.Itoa,
		"-1", "1", strconv.Itoa(hi+1))
}

// OneOf is one of the words given; it sets a *string.
func OneOf(words ...string) OptionKind {
	var invalid []string
	for _, w := range []string{"", "?"} {
		if !slices.Contains(words, w) {
			invalid = append(invalid, w)
		}
	}
	identity := func(s string) (string, error) { return s, nil }
	return within(strings.Join(words, "|"), orList(words), identity,
		func(s string) bool { return slices.Contains(words, s) }, func(s string) string { return s }, invalid...)
}

// orList is "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Duration is a positive duration such as 90s or 100ms; it sets a
// *time.Duration.
func Duration() OptionKind {
	return within("a duration", "a positive duration such as 90s", time.ParseDuration,
		func(d time.Duration) bool { return d > 0 }, formatDuration, "0s", "-1s", "2")
}

// formatDuration writes whole seconds as "120s" and whole milliseconds as
// "100ms", the way defaults are written, rather than time's "2m0s".
func formatDuration(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return d.String()
}

// Text is any text, read as it is; values names it for help text ("a FEN").
// It sets a *string.
func Text(values string) OptionKind {
	return NewKind(values, func(s string) (string, error) { return s, nil }, func(s string) string { return s })
}

// OptionSpec is one rule option of a game whose options are the fields of T.
type OptionSpec[T any] struct {
	Name    string
	Default string // as a user would write it; it must parse
	Doc     string
	Kind    OptionKind
	// Field returns a pointer to the field of o the option sets, of the type
	// its Kind reads (*bool for Bool, *int for Int ...). A mismatch is a
	// programming error: the table panics, and the registry's test finds it.
	Field func(o *T) any
}

// field is the spec's field of o, checked against its kind.
func (s OptionSpec[T]) field(o *T) any {
	f := s.Field(o)
	if !s.Kind.fits(f) {
		panic(fmt.Sprintf("rules: option %s sets a %T, which its kind (%s) does not read", s.Name, f, s.Kind.values))
	}
	return f
}

// set reads text into the spec's field of o; the error names the option.
func (s OptionSpec[T]) set(o *T, text string) error {
	if err := s.Kind.set(s.field(o), text); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	return nil
}

// OptionTable is every rule option of one game, whose options are the fields
// of T, in the order help text lists them.
type OptionTable[T any] struct {
	Game  string // the game's name, for the message refusing an unknown option
	Specs []OptionSpec[T]
}

// Options is the list Game.Options returns.
func (t OptionTable[T]) Options() []Option {
	out := make([]Option, len(t.Specs))
	for i, s := range t.Specs {
		out[i] = Option{Name: s.Name, Default: s.Default, Values: s.Kind.values, Doc: s.Doc}
	}
	return out
}

// Defaults is every option at its Default. A Default that does not parse is a
// programming error, and Defaults panics.
func (t OptionTable[T]) Defaults() T {
	var o T
	for _, s := range t.Specs {
		if err := s.set(&o, s.Default); err != nil {
			panic(fmt.Sprintf("rules: %s: the default of %v", t.Game, err))
		}
	}
	return o
}

// Parse reads rule options by name over the defaults, in the table's order. A
// name the table lacks is refused as CheckOptions refuses it.
func (t OptionTable[T]) Parse(m map[string]string) (T, error) {
	o := t.Defaults()
	if err := checkNames(t.Game, t.Options(), m); err != nil {
		return o, err
	}
	for _, s := range t.Specs {
		if v, ok := m[s.Name]; ok {
			if err := s.set(&o, v); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// Map writes every option of o by name, in the form Parse reads, as
// transcripts record them.
func (t OptionTable[T]) Map(o T) map[string]string {
	out := make(map[string]string, len(t.Specs))
	for _, s := range t.Specs {
		out[s.Name] = s.Kind.format(s.field(&o))
	}
	return out
}

// Check refuses a value of o outside its option's bounds, for options set in
// code rather than parsed. Kinds made with NewKind are not checked.
func (t OptionTable[T]) Check(o T) error {
	for _, s := range t.Specs {
		if s.Kind.check == nil {
			continue
		}
		if err := s.Kind.check(s.field(&o)); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

// Canonical implements OptionSet: Map of Parse.
func (t OptionTable[T]) Canonical(m map[string]string) (map[string]string, error) {
	o, err := t.Parse(m)
	if err != nil {
		return nil, err
	}
	return t.Map(o), nil
}

// Invalid implements OptionSet.
func (t OptionTable[T]) Invalid(name string) []string {
	for _, s := range t.Specs {
		if s.Name == name {
			return slices.Clone(s.Kind.invalid)
		}
	}
	return nil
}

// OptionSet is an OptionTable seen without its struct type, for code that
// holds only a Game (the test that checks every registered game's options).
type OptionSet interface {
	// Options is the list Game.Options returns.
	Options() []Option
	// Canonical parses m over the defaults and writes every option back by
	// name, as OptionTable.Map does.
	Canonical(m map[string]string) (map[string]string, error)
	// Invalid lists values of the named option that parsing refuses (none
	// for an option that takes any text).
	Invalid(name string) []string
}

// OptionTabler is implemented by games whose rule options are an OptionTable.
type OptionTabler interface {
	OptionTable() OptionSet
}

// CheckOptions refuses option names a game does not know.
func CheckOptions(g Game, opts map[string]string) error {
	return checkNames(g.Name(), g.Options(), opts)
}

// checkNames refuses a name of opts that options lacks (the first in sorted
// order, so the message does not vary).
func checkNames(game string, options []Option, opts map[string]string) error {
	var names []string
	for _, o := range options {
		names = append(names, o.Name)
	}
	var unknown []string
	for k := range opts {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%s has no rule option %q (options: %s)", game, unknown[0], strings.Join(names, ", "))
	}
	return nil
}
