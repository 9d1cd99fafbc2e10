package witness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Request is an add-checkpoint request's body: the size of the checkpoint
// the witness last cosigned of the log, the proof that the signed one
// extends it, and the signed checkpoint.
func Request(old int64, proof tlog.TreeProof, signed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		b.WriteString(h.String() + "\n")
	}
	b.WriteString("\n")
	b.Write(signed)
	return b.Bytes()
}

// Submit asks the witness at url (its prefix: url/add-checkpoint is
// posted to) to cosign signed, proven to extend the tree of size old by
// proof. It returns the witness's cosignature lines, checked with vkey;
// a *ConflictError says the size the witness knows (ask again with a
// proof from it).
func Submit(ctx context.Context, client *http.Client, url, vkey string, old int64, proof tlog.TreeProof, signed []byte) ([]byte, error) {
	v, err := NewVerifier(vkey)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/add-checkpoint", bytes.NewReader(Request(old, proof, signed)))
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close() // read only
	body, err := io.ReadAll(io.LimitReader(res.Body, maxRequest))
	if err != nil {
		return nil, err
	}
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusConflict:
		known, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("witness %s: 409 with a size that does not read: %q", url, body)
		}
		return nil, &ConflictError{Known: known}
	default:
		return nil, fmt.Errorf("witness %s: %s: %s", url, res.Status, strings.TrimSpace(string(body)))
	}
	// The cosignature must be the witness's own, of this checkpoint.
	n, err := note.Open(slices.Concat(textOf(signed), []byte("\n"), body), note.VerifierList(v))
	if err != nil {
		return nil, fmt.Errorf("witness %s: its answer is not its cosignature of the checkpoint: %w", url, err)
	}
	if len(n.Sigs) != 1 {
		return nil, errors.New("witness " + url + ": its answer holds more than its cosignature")
	}
	return body, nil
}

// textOf is a signed note's text, its signatures left out.
func textOf(signed []byte) []byte {
	i := bytes.LastIndex(signed, []byte("\n\n"))
	if i < 0 {
		return signed
	}
	return signed[:i+1]
}
