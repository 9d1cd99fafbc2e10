// Package ziptest builds ZIP archives for tests, hostile ones included: any
// name, any mode (symlinks too), and a hook to tamper with each header.
package ziptest

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"testing"
)

// Entry is one file of an archive.
type Entry struct {
	Name string
	Data []byte
	Mode fs.FileMode // 0 means 0644
	Edit func(*zip.FileHeader)
}

// Bytes builds the archive.
func Bytes(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		mode := e.Mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		if e.Edit != nil {
			e.Edit(h)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.Data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
