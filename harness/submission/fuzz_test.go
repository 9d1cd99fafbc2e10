package submission_test

import (
	"archive/zip"
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/internal/ziptest"
)

// fuzzLimits are small, so that the fuzzer's inputs reach every limit.
func fuzzLimits() submission.Limits {
	return submission.Limits{MaxArchiveBytes: 64 << 10, MaxTotalBytes: 32 << 10, MaxFileBytes: 16 << 10, MaxEntries: 8, MaxRatio: 200}
}

// fuzzDeadline is how long one input may take before it counts as a hang.
const fuzzDeadline = 10 * time.Second

func FuzzReadZip(f *testing.F) {
	for _, c := range submissiontest.Cases(f, f.TempDir()) {
		if c.Zip != nil && len(c.Zip) <= 64<<10 {
			f.Add(c.Zip)
		}
	}
	type entry = ziptest.Entry
	store := func(h *zip.FileHeader) { h.Method = zip.Store }
	for _, entries := range [][]entry{
		{{Name: "team/bot", Data: submissiontest.ELF, Mode: 0o755}, {Name: "team/README.md", Data: []byte("# bot\n")}, {Name: "team/"}},
		{{Name: "bot.py", Data: []byte("#!/usr/bin/env python3\nprint('e2e4')\n"), Mode: 0o755, Edit: store}},
		{{Name: "a", Data: submissiontest.Noise(10 << 10)}, {Name: "b", Data: make([]byte, 20<<10)}},
		{{Name: "x", Data: make([]byte, 17<<10)}},
		{{Name: "__MACOSX/._bot", Data: []byte("x")}, {Name: "bot", Data: submissiontest.ELF, Mode: 0o4755}},
		{{Name: "bot", Data: submissiontest.ELF, Edit: func(h *zip.FileHeader) { h.Comment = "c"; h.Extra = []byte{0x55, 0x54, 1, 0, 1} }}},
	} {
		f.Add(ziptest.Bytes(f, entries...))
	}
	f.Add([]byte{})
	f.Add([]byte("PK\x05\x06"))
	f.Add([]byte("PK\x03\x04"))

	f.Fuzz(func(t *testing.T, data []byte) {
		hang := time.AfterFunc(fuzzDeadline, func() { panic(fmt.Sprintf("ReadZip hung for %v on %q", fuzzDeadline, data)) })
		defer hang.Stop()

		lim := fuzzLimits()
		files, err := submission.ReadZip(data, lim)
		if err != nil {
			var se *submission.Error
			if !errors.As(err, &se) || se.Kind == "" {
				t.Fatalf("a refusal without a kind: %T %v", err, err)
			}
			if files != nil {
				t.Fatalf("refused (%v) but returned %d files", err, len(files))
			}
			return
		}
		if len(data) > int(lim.MaxArchiveBytes) {
			t.Fatalf("accepted a %d-byte archive; the limit is %d", len(data), lim.MaxArchiveBytes)
		}
		if len(files) == 0 || len(files) > lim.MaxEntries {
			t.Fatalf("accepted %d files; the limit is %d", len(files), lim.MaxEntries)
		}
		var total int64
		names := map[string]bool{}
		for _, file := range files {
			size := int64(len(file.Data))
			if size > lim.MaxFileBytes {
				t.Fatalf("%q is %d bytes; the limit per file is %d", file.Name, size, lim.MaxFileBytes)
			}
			total += size
			if err := submission.CheckName(file.Name); err != nil {
				t.Fatalf("returned an unsafe name: %v", err)
			}
			if names[file.Name] {
				t.Fatalf("returned %q twice", file.Name)
			}
			names[file.Name] = true
			if file.Mode&^fs.ModePerm != 0 {
				t.Fatalf("%q has mode %v: only permission bits may be returned", file.Name, file.Mode)
			}
		}
		if total > lim.MaxTotalBytes {
			t.Fatalf("returned %d bytes in all; the limit is %d", total, lim.MaxTotalBytes)
		}
	})
}
