// Package distrib spreads a tournament's games over machines through NATS
// JetStream: the coordinator publishes each unplayed game to a work-queue
// stream (one message id per game and attempt, so publishing again on resume
// is harmless), workers pull one game per free slot, keep it alive with
// in-progress acks while it plays, put the match directory in an object store
// and publish a result naming it; the coordinator takes results in order.
// The queue costs one round trip per game, never per turn: a game is played
// wholly on the worker's machine.
//
// It must never count a result twice, nor drop a game: a game is acked only
// once its result is published, so a worker that dies loses nothing (the game
// is redelivered once its ack wait runs out). It does not judge results; the
// coordinator re-judges each one (replay) before it counts.
package distrib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Server is an embedded NATS server with JetStream, its store in a directory
// (under the tournament's), for a coordinator that runs its own.
type Server struct {
	s *server.Server
}

// StartServer starts an embedded server on host:port (port 0: any free port)
// storing its streams in dir.
func StartServer(dir, host string, port int) (*Server, error) {
	if port == 0 {
		port = server.RANDOM_PORT
	}
	s, err := server.NewServer(&server.Options{
		ServerName: "arena-coordinator", Host: host, Port: port,
		JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true,
	})
	if err != nil {
		return nil, fmt.Errorf("start the embedded NATS server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, errors.New("the embedded NATS server did not become ready within 10 s")
	}
	return &Server{s: s}, nil
}

// URL is where clients connect.
func (s *Server) URL() string { return s.s.ClientURL() }

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}

// Job is one game to play.
type Job struct {
	Tournament string `json:"tournament"`
	Game       int    `json:"game"`
	Attempt    int    `json:"attempt"`
	// Spec is the game as the tournament describes it (bots by hash, seed,
	// rules); distrib does not read it.
	Spec json.RawMessage `json:"spec"`
}

// Result is a played game: the worker that played it, and the name of its
// match directory's archive in the tournament's object store.
type Result struct {
	Tournament string `json:"tournament"`
	Game       int    `json:"game"`
	Attempt    int    `json:"attempt"`
	Worker     string `json:"worker"`
	// Delivered is how many times the game was handed out before this
	// result (2 or more: an earlier worker did not finish it).
	Delivered uint64 `json:"delivered"`
	Object    string `json:"object"`
	Error     string `json:"error,omitempty"` // the worker could not play it (a host fault)
}

// Queue is one tournament's streams on a JetStream server.
type Queue struct {
	js         jetstream.JetStream
	tournament string
	games      jetstream.Stream
	results    jetstream.Stream
	store      jetstream.ObjectStore
}

// DefaultAckWait is how long a game may go without news from its worker
// before it is handed to another.
const DefaultAckWait = 30 * time.Second

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func (q *Queue) gamesSubject() string   { return "arena." + q.tournament + ".games" }
func (q *Queue) resultsSubject() string { return "arena." + q.tournament + ".results" }

func newQueue(nc *nats.Conn, tournament string) (*Queue, error) {
	t := unsafeName.ReplaceAllString(tournament, "_")
	if t == "" {
		return nil, errors.New("distrib: a tournament needs a name")
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &Queue{js: js, tournament: t}, nil
}

// Join binds a worker to a tournament's queue, which its coordinator made.
func Join(ctx context.Context, nc *nats.Conn, tournament string) (*Queue, error) {
	q, err := newQueue(nc, tournament)
	if err != nil {
		return nil, err
	}
	if q.games, err = q.js.Stream(ctx, "GAMES_"+q.tournament); err != nil {
		return nil, fmt.Errorf("tournament %q has no games queue here (is its coordinator running?): %w", tournament, err)
	}
	if q.results, err = q.js.Stream(ctx, "RESULTS_"+q.tournament); err != nil {
		return nil, err
	}
	if q.store, err = q.js.ObjectStore(ctx, "MATCHES_"+q.tournament); err != nil {
		return nil, err
	}
	return q, nil
}

// Open creates (or finds) the tournament's streams: games as a work queue,
// results, an object store for bots and match directories, and the workers'
// consumer, whose games go to another worker after ackWait without news
// (0: DefaultAckWait). Only the coordinator opens; workers join.
func Open(ctx context.Context, nc *nats.Conn, tournament string, ackWait time.Duration) (*Queue, error) {
	q, err := newQueue(nc, tournament)
	if err != nil {
		return nil, err
	}
	js, t := q.js, q.tournament
	if q.games, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: "GAMES_" + t, Subjects: []string{q.gamesSubject()},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: 7 * 24 * time.Hour,
	}); err != nil {
		return nil, fmt.Errorf("the games stream: %w", err)
	}
	if q.results, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: "RESULTS_" + t, Subjects: []string{q.resultsSubject()},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: 7 * 24 * time.Hour,
	}); err != nil {
		return nil, fmt.Errorf("the results stream: %w", err)
	}
	if q.store, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: "MATCHES_" + t, Storage: jetstream.FileStorage,
	}); err != nil {
		return nil, fmt.Errorf("the match store: %w", err)
	}
	if ackWait <= 0 {
		ackWait = DefaultAckWait
	}
	if _, err := q.games.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: consumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait,
		MaxDeliver: -1, FilterSubject: q.gamesSubject(),
	}); err != nil {
		return nil, fmt.Errorf("the workers' consumer: %w", err)
	}
	return q, nil
}

// Publish queues a game. Publishing the same game and attempt again is a
// no-op on the server (its message id is seen): duplicate says so.
func (q *Queue) Publish(ctx context.Context, j Job) (duplicate bool, err error) {
	j.Tournament = q.tournament
	data, err := json.Marshal(j)
	if err != nil {
		return false, err
	}
	ack, err := q.js.Publish(ctx, q.gamesSubject(), data, jetstream.WithMsgID(fmt.Sprintf("game-%d-attempt-%d", j.Game, j.Attempt)))
	if err != nil {
		return false, fmt.Errorf("publish game %d: %w", j.Game, err)
	}
	return ack.Duplicate, nil
}

// Pending is how many games wait in the queue (not yet handed out or acked).
func (q *Queue) Pending(ctx context.Context) (uint64, error) {
	info, err := q.games.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// Put stores data in the tournament's object store under name, unless an
// object of that name is there (objects are named by their content's hash).
func (q *Queue) Put(ctx context.Context, name string, data []byte) error {
	if _, err := q.store.GetInfo(ctx, name); err == nil {
		return nil
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	_, err := q.store.PutBytes(ctx, name, data)
	return err
}

// Get reads an object; the store checks its digest.
func (q *Queue) Get(ctx context.Context, name string) ([]byte, error) {
	return q.store.GetBytes(ctx, name)
}
