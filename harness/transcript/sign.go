package transcript

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sigPrefix starts the signature field, always the last field of a signed
// footer. The signature covers the footer line without it.
const sigPrefix = `,"signature":{"alg":"ed25519","key":"`

// Signature is what a signed footer ends with.
type Signature struct {
	Alg string `json:"alg"`
	Key string `json:"key"` // hex public key
	Sig string `json:"sig"` // hex signature
}

func sign(line []byte, key ed25519.PrivateKey) []byte {
	sig := ed25519.Sign(key, line)
	pub := key.Public().(ed25519.PublicKey)
	out := append([]byte{}, line[:len(line)-1]...)
	return append(out, signatureField(pub, sig)...)
}

// signatureField is the end of a signed footer, from the comma before
// "signature" to the closing brace of the footer.
func signatureField(pub ed25519.PublicKey, sig []byte) []byte {
	out := append([]byte(sigPrefix), hex.EncodeToString(pub)...)
	out = append(out, `","sig":"`...)
	out = append(out, hex.EncodeToString(sig)...)
	return append(out, `"}}`...)
}

// KeyID is a short fingerprint of a public key, for people to compare.
func KeyID(pubHex string) string {
	b, err := hex.DecodeString(pubHex)
	if err != nil {
		return "invalid"
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// VerifySignature checks the footer's signature. It returns the signer's public
// key (hex), or "" when the footer is not signed.
func VerifySignature(lines []Line) (string, error) {
	if len(lines) == 0 {
		return "", errors.New("no lines")
	}
	raw := lines[len(lines)-1].Raw
	i := bytes.LastIndex(raw, []byte(sigPrefix))
	if i < 0 {
		if bytes.Contains(raw, []byte(`"signature"`)) {
			return "", errors.New("the footer's signature is malformed")
		}
		return "", nil
	}
	var wrap struct {
		Signature Signature `json:"signature"`
	}
	if err := json.Unmarshal(append([]byte("{"), raw[i+1:]...), &wrap); err != nil {
		return "", fmt.Errorf("the footer's signature is malformed: %v", err)
	}
	s := wrap.Signature
	pub, err := hex.DecodeString(s.Key)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return "", errors.New("the footer's signing key is malformed")
	}
	sig, err := hex.DecodeString(s.Sig)
	if err != nil {
		return "", errors.New("the footer's signature is malformed")
	}
	// The signature covers the footer up to its signature field; that field
	// must then be exactly what the writer puts there, so that no byte of the
	// line escapes the check (a "\r", a space, another key, upper-case hex).
	if want := signatureField(pub, sig); !bytes.Equal(raw[i:], want) {
		return "", fmt.Errorf("the footer's signature is malformed: the line ends %q after the signed part, not %q", raw[i:], want)
	}
	signed := append(append([]byte{}, raw[:i]...), '}')
	if !ed25519.Verify(pub, signed, sig) {
		return s.Key, errors.New("the footer's signature does not match: the transcript was changed after it was signed")
	}
	return s.Key, nil
}

// LoadOrCreateKey reads an ed25519 signing key (a hex seed) from path, creating
// it with mode 0600 when it does not exist.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		// A key that is not safely on disk must not sign anything: the next
		// run would make another one. Never leave a partial key file behind.
		_, err = f.WriteString(hex.EncodeToString(seed) + "\n")
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path) // best effort: the write error is the one to report
			return nil, fmt.Errorf("write signing key %s: %w", path, err)
		}
		return ed25519.NewKeyFromSeed(seed), nil
	}
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s is not an arena signing key (want %d bytes of hex)", path, ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// PublicKeyHex is the hex form of key's public half.
func PublicKeyHex(key ed25519.PrivateKey) string {
	return hex.EncodeToString(key.Public().(ed25519.PublicKey))
}
