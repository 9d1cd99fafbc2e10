package distrib

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// uploadsOf is the stream of worker's upload bucket, as the coordinator
// reads it.
func (q *Queue) uploadsOf(ctx context.Context, worker string) (jetstream.Stream, error) {
	q.mu.Lock()
	s := q.uploads[worker]
	q.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := q.js.Stream(ctx, "OBJ_"+uploadBucket(q.tournament, worker))
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.uploads == nil {
		q.uploads = map[string]jetstream.Stream{}
	}
	q.uploads[worker] = s
	return s, nil
}

// removeUpload deletes an upload: its chunks and its description.
func (q *Queue) removeUpload(ctx context.Context, worker, name string) error {
	s, err := q.uploadsOf(ctx, worker)
	if err != nil {
		return err
	}
	bucket := uploadBucket(q.tournament, worker)
	info, err := describeObject(ctx, s, bucket, name, 1<<62)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil
	case err != nil && !errors.Is(err, errBadObject):
		return err
	}
	// A description that does not hold goes too, with whatever chunks it
	// names. Purging a large archive's chunks on a busy server takes longer
	// than a request's default time: as long as moving it may.
	ctx, cancel := context.WithTimeout(ctx, transferTime(info.Size))
	defer cancel()
	if info.NUID != "" {
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(chunkSubject(bucket, info.NUID))); err != nil {
			return err
		}
	}
	return s.Purge(ctx, jetstream.WithPurgeSubject(metaSubject(bucket, name)))
}

// MaxArchive is the most a result's archive may weigh, as the coordinator
// states it in every hand-out (Job.MaxArchive), and what each worker's
// upload bucket holds twice over (a worker's archives wait there until
// judged): a match directory is a transcript (at most 64 MiB a line, far
// less in practice) and the data files its evidence budget kept.
const MaxArchive = 1 << 30

// MaxResultMessage is the most a result's message may weigh, its headers
// included: a result names its game and hand-out, and carries the worker's
// word on its machine (Machine, a few KiB) and a host fault's reason
// (maxResultError).
const MaxResultMessage = 64 << 10

// maxResultError is the most of a host fault's reason a result carries.
const maxResultError = 4 << 10

// transferRate is the slowest an archive is expected to cross a link, a
// worker's upload to the server or the coordinator's fetch from it (on a
// machine busy with other work too): transferTime.
const transferRate = 1 << 20

// transferTime is how long moving size bytes of an archive may take: 30 s
// and a second per MiB. A fetch is allowed the hand-out's cap's, whatever
// the upload's description claims.
func transferTime(size uint64) time.Duration {
	return 30*time.Second + time.Duration(size/transferRate)*time.Second
}

// fetchLanes is how many archives the coordinator fetches at once: one
// large or slow fetch delays no other worker's result.
const fetchLanes = 4

// errFetch is a fetch that failed on the coordinator's side (its link to
// the server, its disk): the result is taken again later, and says
// nothing of its sender.
var errFetch = errors.New("the coordinator could not fetch a result's archive")

// fetch spools a result's archive to a file of its own in the queue's
// spool directory (SpoolIn), chunk by chunk through direct gets
// (streamObject): its description is read first and refused past the
// hand-out's cap, and a chunk its description claims that is not there
// refuses it at once. The archive is never held in memory. It returns the
// file (the caller removes it), or why the archive does not hold (the
// worker's fault: lost), or an error wrapping errFetch (the coordinator's).
func (q *Queue) fetch(ctx context.Context, r Result) (f *os.File, lost string, err error) {
	store, err := q.uploadsOf(ctx, r.Worker)
	if err != nil {
		return nil, "", fmt.Errorf("%w: worker %s's upload bucket: %w", errFetch, r.Worker, err)
	}
	fctx, cancel := context.WithTimeout(ctx, transferTime(MaxArchive))
	defer cancel()
	if q.spool != "" {
		if err := os.MkdirAll(q.spool, 0o700); err != nil {
			return nil, "", fmt.Errorf("%w: %w", errFetch, err)
		}
	}
	f, err = os.CreateTemp(q.spool, "result-*.tar")
	if err != nil {
		return nil, "", fmt.Errorf("%w: spool a result: %w", errFetch, err)
	}
	w := &spoolWriter{f: f}
	_, err = streamObject(fctx, store, uploadBucket(q.tournament, r.Worker), r.Object, MaxArchive, w)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err == nil {
		return f, "", nil
	}
	f.Close()
	rmErr := os.Remove(f.Name())
	switch {
	case w.err != nil:
		return nil, "", errors.Join(fmt.Errorf("%w: spool a result: %w", errFetch, w.err), rmErr)
	case errors.Is(err, errBadObject):
		return nil, strings.TrimPrefix(err.Error(), errBadObject.Error()+": "), rmErr
	default:
		return nil, "", errors.Join(fmt.Errorf("%w: %w", errFetch, err), rmErr)
	}
}

// spoolWriter writes to the spool file and keeps its own error apart from
// the archive's.
type spoolWriter struct {
	f   *os.File
	err error
}

func (w *spoolWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// SpoolIn sets where results' archives are spooled while they are judged
// (default: the system's temporary directory).
func (q *Queue) SpoolIn(dir string) { q.spool = dir }
