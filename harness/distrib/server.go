package distrib

import (
	"crypto/ed25519"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/arenabots/arena/harness/roster"
)

// Server is an embedded NATS server with JetStream, its store in a directory
// (under the tournament's), for a coordinator that runs its own. Every
// connection is TLS and authenticated by a user key: the coordinator's own
// (made at each start, never on disk, reached in process) and one per
// enrolled worker, whose rights stop at taking this tournament's games,
// reading its bots and handing in its own results.
//
// Who may connect is arena's to say, at each connection (the server's
// custom client authentication, see Check), never by reloading the
// server's options while it runs: the set of admitted keys changes under
// the Server's own lock, and a worker shut out has its connections closed
// by id.
type Server struct {
	s          *server.Server
	tournament string
	admin      nkeys.KeyPair
	adminKey   string

	// enrolment is the workers directory a key not admitted yet is looked
	// up in (lookup), at most once per lookupEvery; joined hears of each
	// worker admitted that way.
	enrolment string
	lookupMu  sync.Mutex
	lookedUp  time.Time
	joined    chan struct{}

	mu sync.Mutex
	// byKey names the admitted workers by public user key.
	byKey map[string]string
	// conns are the connections each worker holds, by the server's ids.
	conns map[string]map[uint64]bool
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
	// Enrolment is the workers directory: a key the server does not admit
	// yet is looked up there when it connects (Admitted), so that a worker
	// enrolled while the server runs is admitted by its first handshake.
	// "": Workers alone, changed by SetWorkers.
	Enrolment string
}

// lookupEvery is how often at most the server reads the enrolment for a
// key it does not admit: a stranger's keys cost a directory read each
// lookupEvery at most.
const lookupEvery = 250 * time.Millisecond

// streamIngest is the most of what a worker sends that one stream holds
// in memory before writing it: twice an honest writer's window.
const streamIngest = 2 * putWindow * chunkSize

// storeLedger is the embedded server's store limit: past any disk, so
// that reserving a bucket's cap never refuses an enrolled worker.
const storeLedger = 1 << 50

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
	adminKey, err := admin.PublicKey()
	if err != nil {
		return nil, err
	}
	s := &Server{tournament: t, admin: admin, adminKey: adminKey, conns: map[string]map[uint64]bool{},
		enrolment: o.Enrolment, joined: make(chan struct{}, 1)}
	if s.byKey, err = admitted(o.Workers); err != nil {
		return nil, err
	}
	port := o.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	// TLS comes first, and a client proves in it that it holds an
	// admitted key: a connection that has not says nothing to the server
	// and hears nothing from it (not its INFO, which names nats-server's
	// version and Go's).
	tlsConf := o.TLS.Clone()
	tlsConf.ClientAuth = tls.RequireAnyClientCert
	tlsConf.VerifyConnection = s.verifyPeer
	opts := &server.Options{
		ServerName: "arena-coordinator", Host: o.Host, Port: port,
		JetStream: true, StoreDir: o.Dir, NoSigs: true, NoLog: true,
		TLS: true, TLSConfig: tlsConf, TLSTimeout: 5, TLSHandshakeFirst: true,
		// A result's archive travels in chunks; messages stay small.
		MaxPayload: 8 << 20,
		// The store's limit is a ledger of what streams reserve, not the
		// disk: each worker's upload bucket reserves its cap (2 GiB) and
		// holds what it holds, briefly (judged, then deleted; unnamed,
		// swept). Left to the server, the ledger is 75% of the disk free at
		// start, and 33 enrolled workers overdrew it on a disk with 72 GB
		// free. What bounds the disk is each bucket's cap and the
		// coordinator's free-space floor.
		JetStreamMaxStore: storeLedger,
		// What a stream takes in at once, waiting to be written: a worker
		// that sends faster than its window (putWindow) is refused, not
		// held in memory.
		StreamMaxBufferedSize: streamIngest,
		// Every client signs a nonce with its key; Check verifies it.
		AlwaysEnableNonce: true, CustomClientAuthentication: s,
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("start the embedded NATS server: %w", err)
	}
	s.s = ns
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("the embedded NATS server did not become ready within 10 s (is %s free?)", net.JoinHostPort(o.Host, strconv.Itoa(o.Port)))
	}
	return s, nil
}

// admitted checks the workers' names and keys and indexes them by key.
func admitted(workers map[string]string) (map[string]string, error) {
	byKey := make(map[string]string, len(workers))
	for _, name := range roster.Names(workers) {
		if err := roster.CheckName(name); err != nil {
			return nil, err
		}
		if !nkeys.IsValidPublicUserKey(workers[name]) {
			return nil, fmt.Errorf("worker %s: %q is not a public user key", name, workers[name])
		}
		byKey[workers[name]] = name
	}
	return byKey, nil
}

// Check admits a client that proves it holds an admitted key (it signed
// the server's nonce with it): the coordinator's, with every right, or an
// admitted worker's, with the worker's rights alone (WorkerPermissions). It
// is the server's custom client authentication: it runs for every
// connection, under the Server's lock.
func (s *Server) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if o == nil || o.Nkey == "" || !verifyNonce(o.Nkey, o.Sig, c.GetNonce()) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Nkey == s.adminKey {
		c.RegisterUser(&server.User{Username: "arena-coordinator", Account: s.s.GlobalAccount()})
		return true
	}
	name, ok := s.byKey[o.Nkey]
	if !ok {
		return false
	}
	c.RegisterUser(&server.User{Username: name, Account: s.s.GlobalAccount(), Permissions: WorkerPermissions(s.tournament, name)})
	if s.conns[name] == nil {
		s.conns[name] = map[uint64]bool{}
	}
	s.conns[name][c.GetID()] = true
	return true
}

// verifyPeer admits a TLS handshake whose client certificate is an
// admitted worker's key (keyCertificate); the handshake itself proved the
// client holds it.
func (s *Server) verifyPeer(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no client certificate")
	}
	pub, ok := cs.PeerCertificates[0].PublicKey.(ed25519.PublicKey)
	if !ok {
		return errors.New("the client certificate's key is not a worker's")
	}
	nkey, err := nkeys.Encode(nkeys.PrefixByteUser, pub)
	if err != nil {
		return err
	}
	s.mu.Lock()
	_, admitted := s.byKey[string(nkey)]
	s.mu.Unlock()
	if !admitted && !s.lookup(string(nkey)) {
		return errors.New("the client certificate's key is not admitted")
	}
	return nil
}

// lookup reads the enrolment for a key the server does not admit, and
// admits every worker enrolled there since (none suspended: Admitted); it
// says whether nkey is now admitted. A read less than lookupEvery ago
// stands.
func (s *Server) lookup(nkey string) bool {
	if s.enrolment == "" {
		return false
	}
	s.lookupMu.Lock()
	defer s.lookupMu.Unlock()
	if time.Since(s.lookedUp) >= lookupEvery {
		s.lookedUp = time.Now()
		if err := s.admitNew(); err != nil {
			slog.Warn("distrib: read the enrolled workers", "err", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.byKey[nkey]
	return ok
}

// admitNew admits the workers enrolled since the server last looked, and
// tells Joined.
func (s *Server) admitNew() error {
	now, err := roster.Admitted(s.enrolment)
	if err != nil {
		return err
	}
	byKey, err := admitted(now)
	if err != nil {
		return err
	}
	added := false
	s.mu.Lock()
	for key, name := range byKey {
		if _, ok := s.byKey[key]; !ok {
			s.byKey[key] = name
			added = true
		}
	}
	s.mu.Unlock()
	if added {
		select {
		case s.joined <- struct{}{}:
		default:
		}
	}
	return nil
}

// Joined hears when a worker enrolled while the server runs is admitted
// at its first connection: the coordinator then makes its upload bucket
// at once, not at its next read of the enrolment.
func (s *Server) Joined() <-chan struct{} { return s.joined }

// verifyNonce says whether sig (base64, URL or standard alphabet) is the
// signature of nonce by the public user key pub.
func verifyNonce(pub, sig string, nonce []byte) bool {
	if !nkeys.IsValidPublicUserKey(pub) || len(nonce) == 0 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		if raw, err = base64.StdEncoding.DecodeString(sig); err != nil {
			return false
		}
	}
	kp, err := nkeys.FromPublicKey(pub)
	if err != nil {
		return false
	}
	return kp.Verify(nonce, raw) == nil
}

// SetWorkers admits exactly these workers from now on: a worker no longer
// listed is disconnected (every connection it holds, by id), a new one may
// join. The server's options are never reloaded.
func (s *Server) SetWorkers(workers map[string]string) error {
	byKey, err := admitted(workers)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.byKey = byKey
	var drop []uint64
	for name, ids := range s.conns {
		if _, ok := workers[name]; ok {
			continue
		}
		for id := range ids {
			drop = append(drop, id)
		}
		delete(s.conns, name)
	}
	s.mu.Unlock()
	var errs []error
	for _, id := range drop {
		// A connection already gone is not there to close.
		if err := s.s.DisconnectClientByID(id); err != nil && !strings.Contains(err.Error(), "no such client") {
			errs = append(errs, fmt.Errorf("disconnect a shut-out worker's connection %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Workers are the workers the server admits now, their public user keys
// by name.
func (s *Server) Workers() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.byKey))
	for key, name := range s.byKey {
		out[name] = key
	}
	return out
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
	return nats.Connect("", nats.InProcessServer(s.s), nats.Nkey(s.adminKey, s.admin.Sign), nats.Name(name))
}

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}

// WorkerPermissions are an enrolled worker's rights on tournament t's queue
// (t as queueName makes it): ask the coordinator for games and speak of
// those it holds, read the bots and the tournament's facts, put archives in
// its own upload bucket, publish its own results, and hear the
// coordinator's word. Nothing else: no stream's acknowledgement (a game
// ends when the coordinator takes its result), no consumer made or
// deleted, no stream or bucket administered but its own uploads, no other
// tournament's or worker's subject reached. An organizer running their own
// NATS cluster gives each worker's user these.
func WorkerPermissions(t, worker string) *server.Permissions {
	const api = "$JS.API."
	bots, up := "OBJ_"+botsBucket(t), "OBJ_"+uploadBucket(t, worker)
	pub := []string{
		api + "INFO",
		wantSubject(t, worker), playingSubject(t, worker), resultsSubject(t, worker),
		// The bots and the tournament's facts: read only.
		// Direct gets only (readObject): no consumer is made or deleted.
		api + "STREAM.INFO." + bots, api + "DIRECT.GET." + bots, api + "DIRECT.GET." + bots + ".>", api + "STREAM.MSG.GET." + bots,
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
