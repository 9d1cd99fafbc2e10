package distrib

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/internal/files"
)

// A worker is admitted by enrolling it: a user key (an NATS nkey, which is an
// ed25519 key) is made for it, its public half kept in the coordinator's
// workers directory, and its seed handed to the worker in a credentials file
// with the coordinator's certificate authority. The same key authenticates
// the worker to the queue and signs every transcript it plays, so the
// coordinator can tell which registered machine produced each result.

// credentialsKind marks a credentials file, so that another JSON file given
// by mistake is named as such.
const credentialsKind = "arena worker credentials"

// Credentials let one worker join one tournament: its name, its user key's
// seed, the queue's name and the coordinator's certificate authority.
type Credentials struct {
	Kind       string `json:"kind"`
	Tournament string `json:"tournament"`
	Worker     string `json:"worker"`
	// URL is where the coordinator listens, when it was known at enrolment
	// (arena worker --join overrides it).
	URL  string `json:"url,omitempty"`
	Seed string `json:"seed"`
	// CA is the PEM certificate the coordinator's server certificate must
	// chain to; empty: the system's roots.
	CA string `json:"ca,omitempty"`
}

// ReadCredentials reads and checks a credentials file.
func ReadCredentials(path string) (*Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(data, &c); err != nil || c.Kind != credentialsKind {
		return nil, fmt.Errorf("%s is not an arena worker credentials file (arena enroll writes one)", path)
	}
	if err := roster.CheckName(c.Worker); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Tournament == "" {
		return nil, fmt.Errorf("%s names no tournament", path)
	}
	if _, err := nkeys.FromSeed([]byte(c.Seed)); err != nil {
		return nil, fmt.Errorf("%s: the key: %w", path, err)
	}
	if c.CA != "" {
		if !x509.NewCertPool().AppendCertsFromPEM([]byte(c.CA)) {
			return nil, fmt.Errorf("%s: the certificate authority is not a PEM certificate", path)
		}
	}
	return &c, nil
}

// Write stores the credentials in a new file readable by its owner only.
func (c *Credentials) Write(path string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	// Never left half written: whoever holds half a key holds nothing.
	return files.WriteNew(path, append(data, '\n'), 0o600)
}

// SigningKey is the worker's key as the ed25519 key transcripts are signed
// with.
func (c *Credentials) SigningKey() (ed25519.PrivateKey, error) {
	prefix, raw, err := nkeys.DecodeSeed([]byte(c.Seed))
	if err != nil || prefix != nkeys.PrefixByteUser {
		return nil, errors.New("the credentials' key is not a user key")
	}
	return ed25519.NewKeyFromSeed(raw), nil
}

// Options are the connection options these credentials give: the key as the
// user, and TLS verified against the coordinator's authority.
func (c *Credentials) Options() ([]nats.Option, error) {
	kp, err := nkeys.FromSeed([]byte(c.Seed))
	if err != nil {
		return nil, err
	}
	opts, err := userOptions(kp, []byte(c.CA))
	if err != nil {
		return nil, err
	}
	// A worker rides out a coordinator's restart and a cut link: it keeps
	// reconnecting, and its replies come on its own inboxes.
	return append(opts, nats.Name("arena worker "+c.Worker), nats.CustomInboxPrefix(inboxPrefix(c.Worker)),
		nats.MaxReconnects(-1), nats.ReconnectWait(time.Second)), nil
}

// ClusterOptions are the connection options for a coordinator on an
// organizer's own NATS cluster: the cluster's credentials file for this
// worker's user (whose rights the organizer sets to WorkerPermissions), TLS
// verified against caFile (or the system's roots) when the URL asks for it;
// the arena credentials then only sign.
func (c *Credentials) ClusterOptions(natsCreds, caFile string) []nats.Option {
	opts := []nats.Option{nats.UserCredentials(natsCreds), nats.Name("arena worker " + c.Worker),
		nats.CustomInboxPrefix(inboxPrefix(c.Worker)), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second)}
	if caFile != "" {
		opts = append(opts, nats.RootCAs(caFile))
	}
	return opts
}

func userOptions(kp nkeys.KeyPair, caPEM []byte) ([]nats.Option, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	cert, err := keyCertificate(kp)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if len(caPEM) > 0 {
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("the certificate authority is not a PEM certificate")
		}
	}
	// TLS first, with the key's own certificate: a coordinator's server
	// says nothing, not even its version, to a connection that has not
	// proved it holds an admitted key (Server.verifyPeer).
	return []nats.Option{nats.Nkey(pub, kp.Sign), nats.Secure(cfg), nats.TLSHandshakeFirst()}, nil
}

// keyCertificate is a TLS client certificate for a worker's user key,
// signed by the key itself: it proves, in the handshake, that the client
// holds the key; the server admits it only if the key is enrolled.
func keyCertificate(kp nkeys.KeyPair) (tls.Certificate, error) {
	seed, err := kp.Seed()
	if err != nil {
		return tls.Certificate{}, err
	}
	prefix, raw, err := nkeys.DecodeSeed(seed)
	if err != nil || prefix != nkeys.PrefixByteUser {
		return tls.Certificate{}, errors.New("the key is not a user key")
	}
	key := ed25519.NewKeyFromSeed(raw)
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "arena worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// KeyHex is the hex ed25519 public key of a worker's public user key, the
// form transcripts name their signer in.
func KeyHex(userKey string) (string, error) {
	raw, err := nkeys.Decode(nkeys.PrefixByteUser, []byte(userKey))
	if err != nil {
		return "", fmt.Errorf("%q is not a worker's public key: %w", userKey, err)
	}
	return hex.EncodeToString(raw), nil
}

// The workers directory (a tournament's "workers") holds the authority's
// certificate and key and one NAME.pub per enrolled worker. Removing a .pub
// revokes that worker: a running coordinator drops its connection at its
// next look.
const (
	caCertFile = "ca.pem"
	caKeyFile  = "ca-key.pem"
)

// Enroll admits a worker to the tournament whose workers directory is dir:
// it keeps the worker's public key there and returns its credentials, to be
// handed to the worker's machine. A name is enrolled once.
func Enroll(dir, tournament, worker, url string) (*Credentials, error) {
	if err := roster.CheckName(worker); err != nil {
		return nil, err
	}
	ca, err := LoadOrCreateCA(dir)
	if err != nil {
		return nil, err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	path := roster.KeyFile(dir, worker)
	if err := files.WriteNew(path, []byte(pub+"\n"), 0o644); errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("worker %s is enrolled already (remove %s to revoke it, then enroll it again)", worker, path)
	} else if err != nil {
		return nil, err
	}
	return &Credentials{Kind: credentialsKind, Tournament: tournament, Worker: worker, URL: url, Seed: string(seed), CA: string(ca.certPEM)}, nil
}

// CA is a tournament's own certificate authority: it signs the coordinator's
// server certificate, and workers trust nothing else.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// LoadOrCreateCA reads the authority kept in dir, making it on first use.
func LoadOrCreateCA(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile)
	certPEM, err := os.ReadFile(certPath)
	if errors.Is(err, os.ErrNotExist) {
		return createCA(dir)
	}
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s or %s is not PEM", certPath, keyPath)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certPath, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	return &CA{cert: cert, key: key, certPEM: certPEM}, nil
}

func createCA(dir string) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "arena tournament authority"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	// The key first: a certificate without its key on disk would be an
	// authority nobody can sign with.
	if err := files.WriteNew(filepath.Join(dir, caKeyFile), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	if err := files.WriteNew(filepath.Join(dir, caCertFile), certPEM, 0o644); err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, certPEM: certPEM}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail on a working system
	}
	return n
}

// CertPEM is the authority's certificate.
func (ca *CA) CertPEM() []byte { return ca.certPEM }

// ServerTLS issues a server certificate for hosts (names or addresses) and
// returns the server's TLS configuration. It is made anew at each start, so
// a coordinator that moves to another address needs nothing re-enrolled.
func (ca *CA) ServerTLS(hosts []string) (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "arena coordinator"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, nil
}

// LocalHosts are the names and addresses a server listening on host is
// reached at: host itself, or every address of this machine when host is
// unspecified, with the machine's name and localhost.
func LocalHosts(host string) []string {
	out := []string{"localhost", "127.0.0.1", "::1"}
	if name, err := os.Hostname(); err == nil {
		out = append(out, name)
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return append(out, host)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP.String())
		}
	}
	return out
}

// SigningKeyOf is the key (hex ed25519) worker was enrolled with in the
// workers directory dir: what its transcripts must be signed with.
func SigningKeyOf(dir, worker string) (string, error) {
	if err := roster.CheckName(worker); err != nil {
		return "", err
	}
	data, err := os.ReadFile(roster.KeyFile(dir, worker))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("worker %s is not enrolled (or was revoked)", worker)
	}
	if err != nil {
		return "", err
	}
	return KeyHex(strings.TrimSpace(string(data)))
}

// Connect connects to a coordinator's server. A refusal of its key is tried
// again a few times within a second: the server refuses every key for the
// instant it takes to change who it admits (a worker enrolled, readmitted,
// suspended meanwhile); a key still refused after that is not admitted.
func Connect(url string, opts ...nats.Option) (*nats.Conn, error) {
	for try := 1; ; try++ {
		nc, err := nats.Connect(url, opts...)
		refused := errors.Is(err, nats.ErrAuthorization) || keyRefused(err)
		switch {
		case err == nil:
			return nc, nil
		case refused && try < 5:
			time.Sleep(time.Duration(try) * 50 * time.Millisecond)
		case refused:
			return nil, fmt.Errorf("the coordinator at %s refuses this worker's key: it is not enrolled in this tournament, or is suspended or revoked (arena workers list DIR on the coordinator's machine says which): %w: %w", url, ErrKeyRefused, err)
		case errors.Is(err, nats.ErrNoServers):
			return nil, fmt.Errorf("nothing answers at %s: is the coordinator running there, and its tournament not over? (%w)", url, err)
		default:
			return nil, err
		}
	}
}

// ErrKeyRefused is a coordinator's server refusing a worker's key (Connect).
var ErrKeyRefused = errors.New("key refused")

// keyRefused says whether err is a TLS handshake the server ended because
// the client's certificate (its key's, keyCertificate) is not admitted.
func keyRefused(err error) bool {
	var alert tls.AlertError
	return err != nil && (errors.As(err, &alert) && alert == 42 || strings.Contains(err.Error(), "tls: bad certificate"))
}
