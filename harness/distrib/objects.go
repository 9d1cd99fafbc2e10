package distrib

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Objects are read and written through their streams, never through a
// consumer. A reader takes the object's description by the last message
// of its meta subject, then its chunks one by one by direct gets ("the
// first message from this sequence on with this subject"): a worker
// therefore needs no right to create or delete consumers on a store, and
// cannot make thousands of them (locking every worker out) or delete
// another's; and a description with no data behind it fails at its first
// missing chunk, at once, instead of a consumer waiting for bytes that
// never come. A writer sends its chunks with a bounded window of
// unacknowledged ones, so that the server holds at most that much of an
// upload in memory at a time.

// maxObject is the most a bot (its files, their metadata) may weigh as read.
const maxObject = 512 << 20

// chunkSize is the size of every chunk but an object's last, as putObject
// writes them; minChunk is the smallest a reader accepts (a description
// claiming many tiny chunks would cost a direct get each).
const (
	chunkSize = 128 << 10
	minChunk  = 64 << 10
)

// putWindow is how many chunks a writer has in flight at once: 16 MiB of
// an upload in the server's memory (under the server's own bound on what
// a stream takes in at once, streamIngest).
const putWindow = 128

// errBadObject marks what says an object does not hold (a missing chunk,
// a size or digest that does not match, a description that does not
// read): the fault of whoever wrote it, not of the link.
var errBadObject = errors.New("the object does not hold")

func badObject(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errBadObject, fmt.Sprintf(format, a...))
}

// metaSubject and chunkSubject are where an object's description and
// chunks are kept in its bucket's stream.
func metaSubject(bucket, name string) string {
	return fmt.Sprintf("$O.%s.M.%s", bucket, base64.URLEncoding.EncodeToString([]byte(name)))
}
func chunkSubject(bucket, nuid string) string { return fmt.Sprintf("$O.%s.C.%s", bucket, nuid) }

// readObject reads object name of the object store bucket through its
// stream, checking the size and the digest its description gives.
func readObject(ctx context.Context, stream jetstream.Stream, bucket, name string) ([]byte, error) {
	var out bytes.Buffer
	if _, err := streamObject(ctx, stream, bucket, name, maxObject, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out.Bytes(), nil
}

// describeObject reads an object's description and checks it against
// limit: its size, and a chunk count its size allows.
func describeObject(ctx context.Context, stream jetstream.Stream, bucket, name string, limit uint64) (jetstream.ObjectInfo, error) {
	var info jetstream.ObjectInfo
	meta, err := stream.GetLastMsgForSubject(ctx, metaSubject(bucket, name))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return info, fmt.Errorf("%w: %w", errBadObject, jetstream.ErrObjectNotFound)
	}
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(meta.Data, &info); err != nil {
		return jetstream.ObjectInfo{}, badObject("its description does not read: %v", err)
	}
	if info.NUID == "" || strings.ContainsAny(info.NUID, ".*> \t\r\n") {
		nuid := info.NUID
		info.NUID = ""
		return info, badObject("its description names chunks %q", nuid)
	}
	switch {
	case info.Deleted:
		return info, fmt.Errorf("%w: %w", errBadObject, jetstream.ErrObjectNotFound)
	case info.Size > limit:
		return info, badObject("it is %d bytes, more than the %d it may weigh", info.Size, limit)
	case uint64(info.Chunks) > info.Size/minChunk+1:
		return info, badObject("its description claims %d chunks for %d bytes", info.Chunks, info.Size)
	}
	return info, nil
}

// streamObject copies object name to w chunk by chunk, as describeObject
// allows, and checks its size and digest. An error wrapping errBadObject
// is the object's fault; an error of w is returned as it is.
func streamObject(ctx context.Context, stream jetstream.Stream, bucket, name string, limit uint64, w io.Writer) (jetstream.ObjectInfo, error) {
	info, err := describeObject(ctx, stream, bucket, name, limit)
	if err != nil {
		return info, err
	}
	want, err := jetstream.DecodeObjectDigest(info.Digest)
	if err != nil {
		return info, badObject("its digest: %v", err)
	}
	chunks := chunkSubject(bucket, info.NUID)
	h := sha256.New()
	var seq, n uint64 = 1, 0
	for i := range info.Chunks {
		m, err := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(chunks))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return info, badObject("its description claims %d chunks, and chunk %d is not there", info.Chunks, i+1)
		}
		if err != nil {
			return info, err
		}
		switch size := uint64(len(m.Data)); {
		case n+size > info.Size:
			return info, badObject("its chunks exceed its size %d", info.Size)
		case size < minChunk && i+1 < info.Chunks:
			return info, badObject("chunk %d of %d is %d bytes", i+1, info.Chunks, size)
		}
		h.Write(m.Data)
		if _, err := w.Write(m.Data); err != nil {
			return info, err
		}
		n += uint64(len(m.Data))
		seq = m.Sequence + 1
	}
	if n != info.Size {
		return info, badObject("%d bytes read of the %d its description claims", n, info.Size)
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return info, badObject("its content does not match its digest")
	}
	return info, nil
}

// putObject writes data as object name of bucket through js (made with
// WithPublishAsyncMaxPending(putWindow)), its description last (as the
// object store does, so a reader sees it whole or not at all). A failed
// write removes its chunks.
func putObject(ctx context.Context, js jetstream.JetStream, bucket, name string, data []byte) error {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	nuid := hex.EncodeToString(id[:])
	subj := chunkSubject(bucket, nuid)
	stream, err := js.Stream(ctx, "OBJ_"+bucket)
	if err != nil {
		return err
	}
	// An object it replaces: its chunks go once the new one is whole.
	before, err := describeObject(ctx, stream, bucket, name, 1<<62)
	if err != nil && !errors.Is(err, errBadObject) {
		return err
	}
	fail := func(err error) error {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return errors.Join(err, stream.Purge(pctx, jetstream.WithPurgeSubject(subj)))
	}
	var futures []jetstream.PubAckFuture
	var chunks uint32
	for off := 0; off < len(data); off += chunkSize {
		f, err := js.PublishMsgAsync(&nats.Msg{Subject: subj, Data: data[off:min(off+chunkSize, len(data))]})
		if err != nil {
			return fail(err)
		}
		futures = append(futures, f)
		chunks++
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	for _, f := range futures {
		select {
		case err := <-f.Err():
			return fail(err)
		default:
		}
	}
	sum := sha256.Sum256(data)
	info := jetstream.ObjectInfo{
		ObjectMeta: jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunkSize}},
		Bucket:     bucket, NUID: nuid, Size: uint64(len(data)), ModTime: time.Now().UTC(), Chunks: chunks,
		Digest: "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:]),
	}
	meta, err := json.Marshal(info)
	if err != nil {
		return fail(err)
	}
	m := nats.NewMsg(metaSubject(bucket, name))
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	m.Data = meta
	if _, err := js.PublishMsg(ctx, m); err != nil {
		return fail(err)
	}
	if before.NUID != "" {
		return stream.Purge(ctx, jetstream.WithPurgeSubject(chunkSubject(bucket, before.NUID)))
	}
	return nil
}
