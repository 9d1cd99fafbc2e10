package submission

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// inDir makes the files (and their directories) under a new directory and
// returns it.
func inDir(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestNameBots(t *testing.T) {
	t.Parallel()
	dir := inDir(t, "teamA/bot.py", "teamB/bot.py", "east/x/bot.py", "west/x/bot.py", "solo.py", "a=b.py", "dir/bot", "kit/run", "other/teamA/bot.py")
	at := func(p string) string { return filepath.Join(dir, p) }
	cases := []struct {
		name  string
		args  []string
		names []string
		err   string
	}{
		{"names from the files", []string{at("solo.py"), at("teamA/bot.py")}, []string{"solo", "bot"}, ""},
		{"a directory keeps its whole name", []string{at("kit"), at("solo.py")}, []string{"kit", "solo"}, ""},
		{"the same file names are told apart by their directories", []string{at("teamA/bot.py"), at("teamB/bot.py"), at("solo.py")},
			[]string{"teamA", "teamB", "solo"}, ""},
		{"as many directories as it takes", []string{at("east/x/bot.py"), at("west/x/bot.py")}, []string{"east-x", "west-x"}, ""},
		{"given names", []string{"alpha=" + at("teamA/bot.py"), "beta=" + at("teamB/bot.py")}, []string{"alpha", "beta"}, ""},
		{"a given name stands, the path's name gives way", []string{"bot=" + at("solo.py"), at("teamA/bot.py")}, []string{"bot", "teamA"}, ""},
		{"a derived name does not take a given one", []string{"teamA=" + at("solo.py"), at("teamA/bot.py"), at("other/teamA/bot.py")},
			[]string{"teamA", filepath.Base(dir) + "-teamA", "other-teamA"}, ""},
		{"a file called a=b.py is that file", []string{at("a=b.py"), at("solo.py")}, []string{"a=b", "solo"}, ""},
		{"a bot may play itself", []string{at("teamA/bot.py"), at("teamA/bot.py")}, []string{"bot", "bot"}, ""},
		{"two equal given names", []string{"x=" + at("teamA/bot.py"), "x=" + at("teamB/bot.py")}, nil, `two bots are named "x"`},
		{"an unsafe name", []string{"my team=" + at("solo.py"), at("teamA/bot.py")}, nil, `"my team" is not a usable bot name`},
		{"a name with a slash", []string{"../up=" + at("solo.py"), at("teamA/bot.py")}, nil, `"../up" is not a usable bot name`},
		{"no path after the name", []string{"x=", at("solo.py")}, nil, "no path after x="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := NameBots(c.args)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q (got %+v)", err, c.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, b := range got {
				names = append(names, b.Name)
			}
			if !reflect.DeepEqual(names, c.names) {
				t.Fatalf("names %q, want %q", names, c.names)
			}
		})
	}
}

func TestNameBotsRefusesPathsNoDirectoryTellsApart(t *testing.T) {
	t.Parallel()
	dir := inDir(t, "subs/team.py", "subs/team.zip")
	_, err := NameBots([]string{filepath.Join(dir, "subs/team.py"), filepath.Join(dir, "subs/team.zip")})
	if err == nil || !strings.Contains(err.Error(), `would all be named "team"`) || !strings.Contains(err.Error(), "NAME=PATH") {
		t.Fatalf("err %v", err)
	}
}

func TestParseBotArg(t *testing.T) {
	t.Parallel()
	dir := inDir(t, "bot.py", "k=v/bot.py")
	cases := []struct {
		arg   string
		want  BotArg
		error string
	}{
		{filepath.Join(dir, "bot.py"), BotArg{Name: "bot", Path: filepath.Join(dir, "bot.py")}, ""},
		{"alpha=" + filepath.Join(dir, "bot.py"), BotArg{Name: "alpha", Path: filepath.Join(dir, "bot.py"), Given: true}, ""},
		// '=' inside a path: the part before it is not a safe name.
		{filepath.Join(dir, "k=v", "bot.py"), BotArg{Name: "bot", Path: filepath.Join(dir, "k=v", "bot.py")}, ""},
		// A missing path with an unsafe prefix is a path, and loading says
		// it does not exist.
		{"/no/such=thing", BotArg{Name: "such=thing", Path: "/no/such=thing"}, ""},
		{"bad name=" + filepath.Join(dir, "bot.py"), BotArg{}, "is not a usable bot name"},
	}
	for _, c := range cases {
		got, err := ParseBotArg(c.arg)
		if c.error != "" {
			if err == nil || !strings.Contains(err.Error(), c.error) {
				t.Errorf("%s: err %v, want %q", c.arg, err, c.error)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.arg, got, err, c.want)
		}
	}
}

func TestLoadWithAName(t *testing.T) {
	t.Parallel()
	dir := inDir(t, "teamA/bot.py")
	b, err := Load(filepath.Join(dir, "teamA/bot.py"), LoadOptions{Limits: DefaultLimits(), Name: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "alpha" || b.Program.Name != "alpha" {
		t.Fatalf("name %q, program %q", b.Name, b.Program.Name)
	}
	if _, err := Load(filepath.Join(dir, "teamA/bot.py"), LoadOptions{Limits: DefaultLimits(), Name: "a/b"}); err == nil {
		t.Fatal("an unsafe name was taken")
	}
}
