// Package distribtest starts a coordinator's queue server for tests, as
// arena runs it: TLS from the tournament's own authority, every worker
// enrolled with its own key and rights. It must never weaken either: tests
// exercise the same checks an event runs with.
package distribtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/roster"
)

// Cluster is a running server with its enrolled workers.
type Cluster struct {
	Server     *distrib.Server
	Tournament string
	Store      string // the JetStream store
	Workers    string // the workers directory
	Creds      map[string]*distrib.Credentials
	ackWait    time.Duration
}

// Start enrolls workers and starts a server for tournament in a new
// directory. The server stops at the test's end.
func Start(t testing.TB, tournament string, ackWait time.Duration, workers ...string) *Cluster {
	t.Helper()
	dir := t.TempDir()
	c := &Cluster{Tournament: tournament, Store: filepath.Join(dir, "nats"), Workers: filepath.Join(dir, "workers"),
		Creds: map[string]*distrib.Credentials{}, ackWait: ackWait}
	for _, w := range workers {
		cr, err := distrib.Enroll(c.Workers, tournament, w, "")
		if err != nil {
			t.Fatal(err)
		}
		c.Creds[w] = cr
	}
	c.Restart(t)
	return c
}

// Restart starts the server again on the same store (after Stop).
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	ca, err := distrib.LoadOrCreateCA(c.Workers)
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := ca.ServerTLS(distrib.LocalHosts("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	enrolled, err := roster.Enrolled(c.Workers)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := distrib.StartServer(distrib.ServerOptions{Dir: c.Store, Host: "127.0.0.1", TLS: tlsConf, Tournament: c.Tournament, Workers: enrolled})
	if err != nil {
		t.Fatal(err)
	}
	c.Server = srv
	t.Cleanup(srv.Close)
}

// Coordinator connects as the coordinator and opens the queue, with an
// upload bucket for every enrolled worker.
func (c *Cluster) Coordinator(t testing.TB) *distrib.Queue {
	t.Helper()
	nc, err := c.Server.Connect("coordinator")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q, err := distrib.Open(context.Background(), nc, c.Tournament, c.ackWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	names := make([]string, 0, len(c.Creds))
	for w := range c.Creds {
		names = append(names, w)
	}
	if err := q.AddWorkers(context.Background(), names); err != nil {
		t.Fatal(err)
	}
	return q
}

// Conn connects as an enrolled worker, over TLS with its key.
func (c *Cluster) Conn(t testing.TB, worker string) *nats.Conn {
	t.Helper()
	opts, err := c.Creds[worker].Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := distrib.Connect(c.Server.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Worker joins the queue as an enrolled worker; its connection is returned
// for tests that cut it.
func (c *Cluster) Worker(t testing.TB, worker string) (*distrib.Queue, *nats.Conn) {
	t.Helper()
	nc := c.Conn(t, worker)
	q, err := distrib.Join(context.Background(), nc, c.Tournament, worker)
	if err != nil {
		t.Fatal(err)
	}
	return q, nc
}
