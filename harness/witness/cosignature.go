// Package witness cosigns a transparency log's checkpoints as C2SP
// tlog-witness and tlog-cosignature say: a witness keeps the last
// checkpoint of each log it knows, cosigns a new one only when the log's
// key signed it and a consistency proof shows it extends the one before,
// and never cosigns two checkpoints that disagree. Teams or a third party
// run one (arena witness) so that an organizer who shows one log to some
// and another to others is caught.
//
// A witness must never cosign a checkpoint its log's key did not sign, nor
// one that does not extend the last it cosigned; its state is written
// before its cosignature is handed out.
package witness

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// algCosignature is the signature type of a cosignature/v1 key
// (c2sp.org/signed-note): an Ed25519 key that signs a timestamped
// checkpoint.
const algCosignature = 4

// keyHash is a key's hash as signed notes name it: the first four bytes of
// SHA-256 of its name, a newline, its type and its public key.
func keyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write(append([]byte{algCosignature}, pub...))
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// message is what a cosignature signs: the checkpoint's text after a
// header naming the scheme and the time (c2sp.org/tlog-cosignature).
func message(t uint64, checkpoint []byte) []byte {
	return fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, checkpoint)
}

// Signer cosigns checkpoints as note.Sign asks: its signatures are the
// time (seconds since 1970, eight bytes) and the Ed25519 signature of
// message.
type Signer struct {
	name string
	key  ed25519.PrivateKey
	now  func() time.Time
}

// NewSigner is the cosigner named name (a name without spaces or +) with
// key.
func NewSigner(name string, key ed25519.PrivateKey) (*Signer, error) {
	if !validName(name) {
		return nil, fmt.Errorf("a witness's name %q: a name without spaces or +", name)
	}
	return &Signer{name: name, key: key, now: time.Now}, nil
}

func (s *Signer) Name() string    { return s.name }
func (s *Signer) KeyHash() uint32 { return keyHash(s.name, s.key.Public().(ed25519.PublicKey)) }

func (s *Signer) Sign(msg []byte) ([]byte, error) {
	t := uint64(s.now().Unix())
	sig := binary.BigEndian.AppendUint64(nil, t)
	return append(sig, ed25519.Sign(s.key, message(t, msg))...), nil
}

// VerifierKey is the key others check the signer's cosignatures with:
// name+hash+base64(type || public key).
func (s *Signer) VerifierKey() string {
	pub := s.key.Public().(ed25519.PublicKey)
	return fmt.Sprintf("%s+%08x+%s", s.name, keyHash(s.name, pub), base64.StdEncoding.EncodeToString(append([]byte{algCosignature}, pub...)))
}

// verifier checks one witness's cosignatures.
type verifier struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
}

func (v *verifier) Name() string    { return v.name }
func (v *verifier) KeyHash() uint32 { return v.hash }
func (v *verifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(v.pub, message(binary.BigEndian.Uint64(sig), msg), sig[8:])
}

// NewVerifier reads a witness's key (Signer.VerifierKey).
func NewVerifier(vkey string) (note.Verifier, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	hash16, key64, ok2 := strings.Cut(rest, "+")
	hash, err1 := strconv.ParseUint(hash16, 16, 32)
	key, err2 := base64.StdEncoding.DecodeString(key64)
	if !ok1 || !ok2 || len(hash16) != 8 || err1 != nil || err2 != nil || !validName(name) {
		return nil, fmt.Errorf("%q is not a witness's key (NAME+HASH+KEY, as arena witness prints it)", vkey)
	}
	if len(key) != 1+ed25519.PublicKeySize || key[0] != algCosignature {
		return nil, fmt.Errorf("%q is not a witness's key: its key is not a cosignature/v1 Ed25519 key (a log's key is another)", vkey)
	}
	v := &verifier{name: name, hash: uint32(hash), pub: ed25519.PublicKey(key[1:])}
	if keyHash(name, v.pub) != v.hash {
		return nil, fmt.Errorf("%q is not a witness's key: its hash is not its name's and key's", vkey)
	}
	return v, nil
}

// Cosigned are the witnesses among keys whose cosignatures of the signed
// checkpoint verify, by name, in the order of keys; a signature that is
// not a cosignature of one of them is left aside (the log's own, another
// witness's).
func Cosigned(signed []byte, keys []string) ([]string, error) {
	var vs []note.Verifier
	for _, k := range keys {
		v, err := NewVerifier(k)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	n, err := note.Open(signed, note.VerifierList(vs...))
	var unverified *note.UnverifiedNoteError
	if errors.As(err, &unverified) {
		return nil, nil // none of them cosigned it
	}
	if err != nil {
		return nil, fmt.Errorf("its cosignatures: %w", err)
	}
	by := map[string]bool{}
	for _, s := range n.Sigs {
		by[s.Name] = true
	}
	var out []string
	for _, v := range vs {
		if by[v.Name()] {
			out = append(out, v.Name())
			by[v.Name()] = false // a key given twice counts once
		}
	}
	return out, nil
}

func validName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "+ \t\n") && strings.TrimSpace(name) == name
}
