package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/internal/gobuild"
)

func TestZZMakeEvent64(t *testing.T) {
	dir := os.Getenv("EV64")
	if dir == "" {
		t.Skip()
	}
	if code, out, errs := runArena("event", "init", dir, "--game", "codeclash"); code != 0 {
		t.Fatalf("event init: exit %d\n%s%s", code, out, errs)
	}
	st, err := event.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	cfg, err := event.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	random, err := os.ReadFile(gobuild.MustStatic(t, "./examples/random"))
	if err != nil {
		t.Fatal(err)
	}
	greedy, err := os.ReadFile(gobuild.MustStatic(t, "./examples/greedy"))
	if err != nil {
		t.Fatal(err)
	}
	py, err := os.ReadFile("../../examples/python/random_bot.py")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		team, err := st.AddTeam(ctx, fmt.Sprintf("Team %02d", i+1), "", "")
		if err != nil {
			t.Fatal(err)
		}
		name, data := "bot", greedy
		switch i % 3 {
		case 1:
			data = random
		case 2:
			name, data = "random_bot.py", py
		}
		sub, err := st.AddSubmission(ctx, cfg, team.ID, name, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
			t.Fatal(err)
		}
	}
}
