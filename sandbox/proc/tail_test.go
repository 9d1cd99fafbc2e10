package proc

import (
	"bytes"
	"testing"
)

func TestTailKeepsTheLastBytes(t *testing.T) {
	for _, n := range []int{0, 1, 7, 64} {
		for _, chunks := range [][]int{{}, {3}, {7}, {64}, {5, 5, 5}, {100}, {6, 1, 1, 90, 2}} {
			var tl tail
			tl.n = n
			if n > 0 {
				tl.buf = make([]byte, n)
			}
			var all []byte
			c := byte('a')
			for _, k := range chunks {
				p := bytes.Repeat([]byte{c}, k)
				c++
				all = append(all, p...)
				tl.write(p)
			}
			got := tl.result()
			want := all[max(0, len(all)-n):]
			if !bytes.Equal(got.Data, want) && !(len(want) == 0 && got.Data == nil) {
				t.Errorf("n=%d chunks=%v: got %q want %q", n, chunks, got.Data, want)
			}
			if got.Total != int64(len(all)) {
				t.Errorf("n=%d chunks=%v: total %d", n, chunks, got.Total)
			}
		}
	}
}
