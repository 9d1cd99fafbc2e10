package distrib_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
	"github.com/arenabots/arena/harness/roster"
)

// try runs op with a short deadline: a request the server refuses for want
// of rights is dropped, so it ends in an error or a time-out, never a reply.
func try(op func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	return op(ctx)
}

// A worker's key takes games, reads bots and hands in its own results, and
// nothing else: it cannot delete or purge the streams, queue a game, speak
// for another worker, touch another worker's uploads or the bots, or see
// another tournament on the same server.
func TestAWorkersRightsStopAtItsOwnGamesAndResults(t *testing.T) {
	c := distribtest.Start(t, "cup", 2*time.Second, "w1", "w2")
	coord := c.Coordinator(t)
	ctx := context.Background()
	if err := coord.Put(ctx, "bot-1", []byte("a bot")); err != nil {
		t.Fatal(err)
	}
	// Another tournament's bots on the same server.
	admin, err := c.Server.Connect("admin")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	other, err := distrib.Open(ctx, admin, "other-cup", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Put(ctx, "bot-2", []byte("another tournament's bot")); err != nil {
		t.Fatal(err)
	}

	// A consumer someone else holds on the bots.
	ajs, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ajs.CreateOrUpdateConsumer(ctx, "OBJ_BOTS_cup", jetstream.ConsumerConfig{Durable: "keeper"}); err != nil {
		t.Fatal(err)
	}

	big := bytes.Repeat([]byte("a bot of many chunks "), 100000) // 2 MB: 16 chunks
	if err := coord.Put(ctx, "bot-big", big); err != nil {
		t.Fatal(err)
	}

	q, nc := c.Worker(t, "w1")
	if data, err := q.Get(ctx, "bot-1"); err != nil || string(data) != "a bot" {
		t.Fatalf("a worker cannot read its tournament's bot: %q %v", data, err)
	}
	if data, err := q.Get(ctx, "bot-big"); err != nil || !bytes.Equal(data, big) {
		t.Fatalf("a worker cannot read a bot of many chunks: %d bytes, %v", len(data), err)
	}
	if _, err := q.Get(ctx, "no-such-bot"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("a bot that is not there: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]func(ctx context.Context) error{
		"delete the games stream": func(ctx context.Context) error { return js.DeleteStream(ctx, "GAMES_cup") },
		"purge the games stream": func(ctx context.Context) error {
			s, err := js.Stream(ctx, "GAMES_cup")
			if err != nil {
				return err
			}
			return s.Purge(ctx)
		},
		"delete the results stream": func(ctx context.Context) error { return js.DeleteStream(ctx, "RESULTS_cup") },
		"queue a game": func(ctx context.Context) error {
			_, err := js.Publish(ctx, "arena.cup.games", []byte(`{"game":99}`))
			return err
		},
		"publish a result as w2": func(ctx context.Context) error {
			_, err := js.Publish(ctx, "arena.cup.results.w2", []byte(`{"worker":"w2"}`))
			return err
		},
		"make a consumer on the bots": func(ctx context.Context) error {
			_, err := js.CreateOrUpdateConsumer(ctx, "OBJ_BOTS_cup", jetstream.ConsumerConfig{Durable: "hog"})
			return err
		},
		"make an ephemeral consumer on the bots": func(ctx context.Context) error {
			_, err := js.OrderedConsumer(ctx, "OBJ_BOTS_cup", jetstream.OrderedConsumerConfig{})
			return err
		},
		"delete a consumer of the bots": func(ctx context.Context) error {
			return js.DeleteConsumer(ctx, "OBJ_BOTS_cup", "keeper")
		},
		"make a consumer on the results": func(ctx context.Context) error {
			_, err := js.CreateOrUpdateConsumer(ctx, "RESULTS_cup", jetstream.ConsumerConfig{Durable: "spy"})
			return err
		},
		"overwrite a bot": func(ctx context.Context) error {
			store, err := js.ObjectStore(ctx, "BOTS_cup")
			if err != nil {
				return err
			}
			_, err = store.PutBytes(ctx, "bot-1", []byte("evil"))
			return err
		},
		"read w2's uploads": func(ctx context.Context) error {
			_, err := js.ObjectStore(ctx, "UP_cup_W_w2")
			return err
		},
		"read another tournament's bots": func(ctx context.Context) error {
			store, err := js.ObjectStore(ctx, "BOTS_other-cup")
			if err != nil {
				return err
			}
			_, err = store.GetBytes(ctx, "bot-2")
			return err
		},
		"make a stream": func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MINE", Subjects: []string{"mine"}})
			return err
		},
	}
	var wg sync.WaitGroup
	for what, op := range refused {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := try(op); err == nil {
				t.Errorf("worker w1 could %s", what)
			}
		}()
	}
	wg.Wait()
	// Nothing changed.
	if n, err := coord.Pending(ctx); err != nil || n != 0 {
		t.Fatalf("the games queue: %d games, %v", n, err)
	}
	if data, err := coord.Get(ctx, "bot-1"); err != nil || string(data) != "a bot" {
		t.Fatalf("the bot: %q %v", data, err)
	}
	if _, err := ajs.Consumer(ctx, "OBJ_BOTS_cup", "keeper"); err != nil {
		t.Fatalf("the consumer someone else holds on the bots: %v", err)
	}
	// A subscription to another worker's inbox or the results is refused.
	errc := make(chan error, 4)
	spy := c.Conn(t, "w1")
	spy.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errc <- err })
	if _, err := spy.SubscribeSync("arena.cup.results.>"); err == nil {
		select {
		case err := <-errc:
			if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Fatalf("subscribing to the results: %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("a worker may subscribe to the results")
		}
	}
}

// Only enrolled keys over TLS with the tournament's authority get in, and a
// revoked worker is cut off.
func TestOnlyEnrolledWorkersOverTLSGetIn(t *testing.T) {
	c := distribtest.Start(t, "cup", 2*time.Second, "w1", "w2")
	c.Coordinator(t)
	url := c.Server.URL()
	if !strings.HasPrefix(url, "tls://") {
		t.Fatalf("the server's URL %s is not TLS", url)
	}
	// A connection that has not proved an admitted key hears nothing:
	// not the server's INFO, which names its version and Go's.
	addr := strings.TrimPrefix(url, "tls://")
	raw, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetReadDeadline(time.Now().Add(time.Second))
	if banner, _ := io.ReadAll(raw); len(banner) > 0 {
		t.Errorf("a plain TCP connection read %q", banner)
	}
	raw.Close()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(c.Creds["w1"].CA))
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err == nil {
		tc.SetReadDeadline(time.Now().Add(time.Second))
		if banner, _ := io.ReadAll(tc); len(banner) > 0 {
			t.Errorf("a TLS connection with no key's certificate read %q", banner)
		}
		tc.Close()
	}
	plain := strings.Replace(url, "tls://", "nats://", 1)
	if nc, err := nats.Connect(plain, nats.Timeout(2*time.Second)); err == nil {
		nc.Close()
		t.Fatal("a client without TLS or key got in")
	}
	// A key nobody enrolled, with the right authority.
	stranger, err := distrib.Enroll(t.TempDir(), "cup", "stranger", "")
	if err != nil {
		t.Fatal(err)
	}
	stranger.CA = c.Creds["w1"].CA
	opts, _ := stranger.Options()
	if nc, err := nats.Connect(url, append(opts, nats.MaxReconnects(0), nats.Timeout(2*time.Second))...); err == nil {
		nc.Close()
		t.Fatal("a worker that was not enrolled got in")
	}
	// An enrolled worker's public key, with the nonce signed by another key.
	impostor, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	w1Key, err := nkeys.FromSeed([]byte(c.Creds["w1"].Seed))
	if err != nil {
		t.Fatal(err)
	}
	w1Pub, err := w1Key.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	caOpts, _ := stranger.Options() // the right authority, the stranger's key
	if nc, err := nats.Connect(url, append(caOpts, nats.Nkey(w1Pub, impostor.Sign), nats.MaxReconnects(0), nats.Timeout(2*time.Second))...); err == nil {
		nc.Close()
		t.Fatal("a client that only knew a worker's public key got in")
	}
	// An enrolled key that trusts another authority does not talk to this
	// server (it could be an impostor's).
	wrongCA := *c.Creds["w1"]
	wrongCA.CA = stranger2CA(t)
	opts, _ = wrongCA.Options()
	if nc, err := nats.Connect(url, append(opts, nats.Timeout(2*time.Second))...); err == nil {
		nc.Close()
		t.Fatal("a worker talked to a server its authority did not certify")
	}
	// Revoking w2: its connection ends and it cannot come back.
	nc := c.Conn(t, "w2")
	if err := os.Remove(filepath.Join(c.Workers, "w2.pub")); err != nil {
		t.Fatal(err)
	}
	enrolled, err := roster.Enrolled(c.Workers)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Server.SetWorkers(enrolled); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for nc.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if nc.IsConnected() {
		t.Fatal("a revoked worker stays connected")
	}
	opts, _ = c.Creds["w2"].Options()
	if again, err := distrib.Connect(url, append(opts, nats.MaxReconnects(0), nats.Timeout(2*time.Second))...); err == nil {
		again.Close()
		t.Fatal("a revoked worker came back")
	} else if !strings.Contains(err.Error(), "refuses this worker's key") {
		t.Errorf("a revoked worker is told %q, not that its key is refused", err)
	}
	c.Conn(t, "w1") // still welcome
}

func stranger2CA(t *testing.T) string {
	t.Helper()
	ca, err := distrib.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return string(ca.CertPEM())
}

// A worker's credentials carry its signing key: the key the coordinator
// holds for it verifies what it signs.
func TestCredentialsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cr, err := distrib.Enroll(filepath.Join(dir, "workers"), "cup", "w1", "tls://example:4222")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "w1.creds")
	if err := cr.Write(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode: %v %v", fi, err)
	}
	if err := cr.Write(path); err == nil {
		t.Fatal("credentials overwrote a file")
	}
	back, err := distrib.ReadCredentials(path)
	if err != nil {
		t.Fatal(err)
	}
	key, err := back.SigningKey()
	if err != nil {
		t.Fatal(err)
	}
	enrolled, err := roster.Enrolled(filepath.Join(dir, "workers"))
	if err != nil {
		t.Fatal(err)
	}
	hexKey, err := distrib.KeyHex(enrolled["w1"])
	if err != nil {
		t.Fatal(err)
	}
	sig := ed25519.Sign(key, []byte("a transcript"))
	pub, _ := json.Marshal(hexKey)
	if !ed25519.Verify(key.Public().(ed25519.PublicKey), []byte("a transcript"), sig) || !strings.Contains(string(pub), hexOf(key)) {
		t.Fatalf("the enrolled key %s is not the credentials' key", hexKey)
	}
	if _, err := distrib.Enroll(filepath.Join(dir, "workers"), "cup", "w1", ""); err == nil {
		t.Fatal("a name was enrolled twice")
	}
	if _, err := distrib.Enroll(filepath.Join(dir, "workers"), "cup", "../evil", ""); err == nil {
		t.Fatal("a name with a path was enrolled")
	}
	os.WriteFile(filepath.Join(dir, "not-creds.json"), []byte(`{"kind":"something else"}`), 0o600)
	if _, err := distrib.ReadCredentials(filepath.Join(dir, "not-creds.json")); err == nil || !strings.Contains(err.Error(), "not an arena worker credentials file") {
		t.Fatalf("another file read as credentials: %v", err)
	}
}

func hexOf(key ed25519.PrivateKey) string {
	const digits = "0123456789abcdef"
	pub := key.Public().(ed25519.PublicKey)
	out := make([]byte, 0, 2*len(pub))
	for _, b := range pub {
		out = append(out, digits[b>>4], digits[b&15])
	}
	return string(out)
}
