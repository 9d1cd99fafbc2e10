package kubernetes

import (
	"context"
	"time"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/probe"
)

// Bench measures what a box costs on the cluster cfg names: a Pod's
// creation until it runs, the attach stream's first byte (the agent's
// hello), a box's whole open (with the program sent) and its delete, each
// over max(runs/20, 5) boxes, and a warm Pod's hand-out (Backend.Warm) as
// often; then runs turns of a no-op bot through the attach stream. It is
// the kubernetes backend's bench (sandbox.Doctor.Bench): its Pods run under
// cfg.Runtime's RuntimeClass alone, whatever others says.
func Bench(ctx context.Context, cfg sandbox.Config, runs int, _ bool) ([]sandbox.Timing, error) {
	b, err := backendFor(cfg)
	if err != nil {
		return nil, err
	}
	lim := sandbox.DefaultLimits()
	var running, hello, open, del []time.Duration
	for range max(runs/20, 5) {
		t := time.Now()
		bx, err := b.Open(ctx, sandbox.Spec{Program: probe.Noop(), Limits: lim})
		if err != nil {
			return nil, err
		}
		open = append(open, time.Since(t))
		p := bx.(*box).p
		running, hello = append(running, p.started.running), append(hello, p.started.hello)
		t = time.Now()
		if err := bx.Close(ctx); err != nil {
			return nil, err
		}
		del = append(del, time.Since(t))
	}
	turns, err := probe.Turns(ctx, b, lim, runs)
	if err != nil {
		return nil, err
	}
	handOuts, err := warmHandOuts(ctx, cfg, lim, max(runs/20, 5))
	if err != nil {
		return nil, err
	}
	var out []sandbox.Timing
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"pod create to running", running}, {"attach to first byte", hello}, {"pod open (all)", open}, {"pod delete", del}, {"warm pod hand-out", handOuts}, {"kubernetes backend turn", turns}} {
		t := sandbox.TimingOf(r.name, r.d, 0)
		t.Runtime = b.place.RuntimeClass
		if t.Runtime == "" {
			t.Runtime = "default"
		}
		out = append(out, t)
	}
	return out, nil
}

// warmHandOuts times n Opens of a box served by a warm pool of one Pod,
// each once the pool has its Pod ready.
func warmHandOuts(ctx context.Context, cfg sandbox.Config, lim sandbox.Limits, n int) ([]time.Duration, error) {
	b, err := backendFor(cfg)
	if err != nil {
		return nil, err
	}
	b.Warm = 1
	defer b.Close(ctx)
	var d []time.Duration
	for i := range n + 1 {
		if i > 0 {
			if err := b.waitWarm(ctx, lim); err != nil {
				return nil, err
			}
		}
		t := time.Now()
		bx, err := b.Open(ctx, sandbox.Spec{Program: probe.Noop(), Limits: lim})
		if err != nil {
			return nil, err
		}
		if i > 0 { // the first Open makes the pool's first Pod
			d = append(d, time.Since(t))
		}
		if err := bx.Close(ctx); err != nil {
			return nil, err
		}
	}
	return d, nil
}
