package transcript

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fuzzDeadline is how long one input may take before it counts as a hang.
const fuzzDeadline = 10 * time.Second

// chainHolds is VerifyChain written again from the format's description, with
// hashes recomputed from the raw bytes: the two must always agree.
func chainHolds(lines []Line) bool {
	if len(lines) == 0 {
		return false
	}
	prev := ""
	for i, l := range lines {
		first, last := i == 0, i == len(lines)-1
		if l.Seq != i || l.Prev != prev {
			return false
		}
		switch {
		case first && l.Type != TypeHeader, last && l.Type != TypeFooter:
			return false
		case !first && !last && l.Type != TypeTurn:
			return false
		}
		prev = Hash(l.Raw)
	}
	return true
}

var signedEnd = regexp.MustCompile(`,"signature":\{"alg":"ed25519","key":"([0-9a-f]{64})","sig":"([0-9a-f]{128})"\}\}$`)

func FuzzRead(f *testing.F) {
	valid := signedSample(f)
	unsigned := func() []byte {
		dir := f.TempDir()
		w, err := Create(dir)
		if err != nil {
			f.Fatal(err)
		}
		for i, typ := range []string{TypeHeader, TypeTurn, TypeFooter} {
			if err := w.Append(typ, body{N: i, Text: "unicode é \u2028 \\ \"quoted\""}); err != nil {
				f.Fatal(err)
			}
		}
		w.Close()
		data, err := os.ReadFile(filepath.Join(dir, FileName))
		if err != nil {
			f.Fatal(err)
		}
		return data
	}()
	golden, err := os.ReadFile(filepath.Join("testdata", "transcript.jsonl.golden"))
	if err != nil {
		f.Fatal(err)
	}
	lines := strings.SplitAfter(string(valid), "\n")
	seeds := [][]byte{
		valid, unsigned, golden,
		[]byte(strings.ReplaceAll(string(valid), "\n", "\r\n")),
		[]byte(strings.TrimSuffix(string(valid), "\n")),
		[]byte(lines[0] + lines[2] + lines[1] + lines[3]),
		[]byte(lines[0] + lines[3]),
		[]byte(strings.Replace(string(valid), `"n":1`, `"n":9`, 1)),
		[]byte(strings.Replace(string(valid), `"sig":"`, `"sig":"00`, 1)),
		{}, []byte("\n"), []byte("null\n"), []byte("{}\n"), []byte(`{"type":"header","seq":0,"prev":""}` + "\n"),
		[]byte(`{"TYPE":"footer","Seq":0}` + "\n"), []byte("[1,2]\n{\n"), []byte("\xff\xfe\n"),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hang := time.AfterFunc(fuzzDeadline, func() { panic(fmt.Sprintf("Read hung for %v on %q", fuzzDeadline, data)) })
		defer hang.Stop()

		lines, err := Read(bytes.NewReader(data))
		var covered []byte
		for i, l := range lines {
			if bytes.IndexByte(l.Raw, '\n') >= 0 {
				t.Fatalf("line %d holds a newline: %q", i+1, l.Raw)
			}
			if l.Hash != Hash(l.Raw) {
				t.Fatalf("line %d: hash %s, its bytes hash to %s", i+1, l.Hash, Hash(l.Raw))
			}
			var env Envelope
			if jerr := json.Unmarshal(l.Raw, &env); jerr != nil || env != l.Envelope {
				t.Fatalf("line %d: envelope %+v, its bytes say %+v (%v)", i+1, l.Envelope, env, jerr)
			}
			covered = append(append(covered, l.Raw...), '\n')
		}
		if !bytes.HasPrefix(data, covered) {
			t.Fatalf("the lines read are not the input's first lines")
		}
		if err != nil {
			return
		}
		// Read accepted the input: its lines are the whole input, so the chain
		// below vouches for every byte of it.
		if !bytes.Equal(covered, data) {
			t.Fatalf("Read accepted %d bytes but its lines cover %d", len(data), len(covered))
		}
		chainErr := VerifyChain(lines)
		if (chainErr == nil) != chainHolds(lines) {
			t.Fatalf("VerifyChain says %v, the format's rules say %v", chainErr, chainHolds(lines))
		}
		if chainErr != nil {
			return
		}
		key, err := VerifySignature(lines)
		if err != nil || key == "" {
			return
		}
		// A signature that verifies covers every byte of the footer but its
		// own value, which has exactly one form.
		raw := lines[len(lines)-1].Raw
		m := signedEnd.FindSubmatchIndex(raw)
		if m == nil || string(raw[m[2]:m[3]]) != key {
			t.Fatalf("a footer that does not end in the signature field verified: %q", raw)
		}
		pub, _ := hex.DecodeString(key)
		sig, _ := hex.DecodeString(string(raw[m[4]:m[5]]))
		if !ed25519.Verify(pub, append(append([]byte{}, raw[:m[0]]...), '}'), sig) {
			t.Fatalf("VerifySignature accepted a signature that does not verify: %q", raw)
		}
	})
}
