package distrib

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// A worker reads the bots' object store without a consumer: the object's
// description by the last message of its meta subject, then its chunks one
// by one by direct gets ("the first message from this sequence on with this
// subject"). A worker therefore needs no right to create or delete
// consumers on the store, and cannot make thousands of them (locking every
// worker out) or delete another's.

// maxObject is the most a bot (its files, their metadata) may weigh as read.
const maxObject = 512 << 20

// readObject reads object name of the object store bucket through its
// stream, checking the size and the digest its description gives.
func readObject(ctx context.Context, stream jetstream.Stream, bucket, name string) ([]byte, error) {
	meta, err := stream.GetLastMsgForSubject(ctx, fmt.Sprintf("$O.%s.M.%s", bucket, base64.URLEncoding.EncodeToString([]byte(name))))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("%s: %w", name, jetstream.ErrObjectNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var info jetstream.ObjectInfo
	if err := json.Unmarshal(meta.Data, &info); err != nil {
		return nil, fmt.Errorf("%s: its description does not read: %w", name, err)
	}
	switch {
	case info.Deleted:
		return nil, fmt.Errorf("%s: %w", name, jetstream.ErrObjectNotFound)
	case info.Size > maxObject:
		return nil, fmt.Errorf("%s is %d bytes, more than %d", name, info.Size, maxObject)
	}
	want, err := jetstream.DecodeObjectDigest(info.Digest)
	if err != nil {
		return nil, fmt.Errorf("%s: its digest: %w", name, err)
	}
	chunks := fmt.Sprintf("$O.%s.C.%s", bucket, info.NUID)
	out := bytes.NewBuffer(make([]byte, 0, info.Size))
	var seq uint64 = 1
	for range info.Chunks {
		m, err := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(chunks))
		if err != nil {
			return nil, fmt.Errorf("%s: a chunk: %w", name, err)
		}
		if uint64(out.Len()+len(m.Data)) > info.Size {
			return nil, fmt.Errorf("%s: its chunks exceed its size %d", name, info.Size)
		}
		out.Write(m.Data)
		seq = m.Sequence + 1
	}
	if uint64(out.Len()) != info.Size {
		return nil, fmt.Errorf("%s: %d bytes read of %d", name, out.Len(), info.Size)
	}
	if sum := sha256.Sum256(out.Bytes()); !bytes.Equal(sum[:], want) {
		return nil, fmt.Errorf("%s: its content does not match its digest", name)
	}
	return out.Bytes(), nil
}
