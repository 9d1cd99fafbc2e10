package distrib

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Server is an embedded NATS server with JetStream, its store in a directory
// (under the tournament's), for a coordinator that runs its own. Every
// connection is TLS and authenticated by a user key: the coordinator's own
// (made at each start, never on disk, reached in process) and one per
// enrolled worker, whose rights stop at taking this tournament's games,
// reading its bots and handing in its own results.
type Server struct {
	s          *server.Server
	mu         sync.Mutex
	opts       *server.Options
	tournament string
	admin      nkeys.KeyPair
}

// ServerOptions say where a coordinator's server listens and whom it admits.
type ServerOptions struct {
	Dir  string // the JetStream store
	Host string
	Port int // 0: any free port
	// TLS is the server's certificate (see CA.ServerTLS); required.
	TLS        *tls.Config
	Tournament string
	// Workers are the enrolled workers' public user keys by name (see
	// Enrolled).
	Workers map[string]string
}

// StartServer starts an embedded server.
func StartServer(o ServerOptions) (*Server, error) {
	if o.TLS == nil {
		return nil, errors.New("distrib: a server needs a TLS certificate")
	}
	t, err := queueName(o.Tournament)
	if err != nil {
		return nil, err
	}
	admin, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	port := o.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: "arena-coordinator", Host: o.Host, Port: port,
		JetStream: true, StoreDir: o.Dir, NoSigs: true, NoLog: true,
		TLS: true, TLSConfig: o.TLS, TLSTimeout: 5,
		// A result's archive travels in chunks; messages stay small.
		MaxPayload: 8 << 20,
	}
	s := &Server{opts: opts, tournament: t, admin: admin}
	opts.Nkeys, err = s.users(o.Workers)
	if err != nil {
		return nil, err
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("start the embedded NATS server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("the embedded NATS server did not become ready within 10 s (is %s free?)", net.JoinHostPort(o.Host, strconv.Itoa(o.Port)))
	}
	s.s = ns
	return s, nil
}

func (s *Server) users(workers map[string]string) ([]*server.NkeyUser, error) {
	pub, err := s.admin.PublicKey()
	if err != nil {
		return nil, err
	}
	users := []*server.NkeyUser{{Nkey: pub}}
	for _, name := range Names(workers) {
		if err := CheckName(name); err != nil {
			return nil, err
		}
		if !nkeys.IsValidPublicUserKey(workers[name]) {
			return nil, fmt.Errorf("worker %s: %q is not a public user key", name, workers[name])
		}
		users = append(users, &server.NkeyUser{Nkey: workers[name], Permissions: WorkerPermissions(s.tournament, name)})
	}
	return users, nil
}

// SetWorkers admits exactly these workers from now on: a worker no longer
// listed is disconnected, a new one may join.
func (s *Server) SetWorkers(workers map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	users, err := s.users(workers)
	if err != nil {
		return err
	}
	next := *s.opts
	next.Nkeys = users
	if err := s.s.ReloadOptions(&next); err != nil {
		return fmt.Errorf("admit the enrolled workers: %w", err)
	}
	s.opts = &next
	return nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.s.Addr() }

// URL is where workers connect: TLS on the server's address.
func (s *Server) URL() string {
	host, port, err := net.SplitHostPort(s.s.Addr().String())
	if err != nil {
		return "tls://" + s.s.Addr().String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return "tls://" + net.JoinHostPort(host, port)
}

// Connect connects the coordinator, in process, with every right.
func (s *Server) Connect(name string) (*nats.Conn, error) {
	pub, err := s.admin.PublicKey()
	if err != nil {
		return nil, err
	}
	return nats.Connect("", nats.InProcessServer(s.s), nats.Nkey(pub, s.admin.Sign), nats.Name(name))
}

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}

// WorkerPermissions are an enrolled worker's rights on tournament t's queue
// (t as queueName makes it): take its games and keep them alive, read its
// bots and its facts, put archives in its own upload bucket, publish its own
// results and progress, and hear the end of the tournament. Nothing else: no
// stream or consumer can be made, changed, purged or deleted but its own
// uploads, no other tournament's or worker's subject reached. An organizer
// running their own NATS cluster gives each worker's user these.
func WorkerPermissions(t, worker string) *server.Permissions {
	const api = "$JS.API."
	games, bots, up := gamesStream(t), "OBJ_"+botsBucket(t), "OBJ_"+uploadBucket(t, worker)
	pub := []string{
		api + "INFO",
		api + "STREAM.INFO." + games,
		api + "CONSUMER.INFO." + games + "." + consumerName,
		api + "CONSUMER.MSG.NEXT." + games + "." + consumerName,
		"$JS.ACK." + games + "." + consumerName + ".>",
		resultsSubject(t, worker), playingSubject(t, worker),
		// The bots and the tournament's facts: read only.
		api + "STREAM.INFO." + bots, api + "DIRECT.GET." + bots, api + "DIRECT.GET." + bots + ".>", api + "STREAM.MSG.GET." + bots,
		api + "CONSUMER.CREATE." + bots, api + "CONSUMER.CREATE." + bots + ".>", api + "CONSUMER.DELETE." + bots + ".>",
		"$JS.FC." + bots + ".>",
		// Its own archives.
		api + "STREAM.INFO." + up, api + "DIRECT.GET." + up, api + "DIRECT.GET." + up + ".>", api + "STREAM.MSG.GET." + up,
		api + "STREAM.PURGE." + up, "$O." + uploadBucket(t, worker) + ".>",
		// Replies to the server's requests (flow control) go to inboxes.
		inboxPrefix(worker) + ".>",
	}
	sub := []string{inboxPrefix(worker) + ".>", controlSubject(t)}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: sub},
	}
}

// inboxPrefix is a worker's own reply subjects: no worker hears another's
// replies.
func inboxPrefix(worker string) string { return "_INBOX_" + worker }
