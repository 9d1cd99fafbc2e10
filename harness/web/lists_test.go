package web

import (
	"fmt"
	"strings"
	"testing"
)

// The kept lists hold what is asked for and let go of the rest: a list
// asked for again stays however many are kept after it, one never asked
// for again goes within two generations, and all they hold stays under
// two generations' bytes.
func TestKeptListsKeepWhatIsAskedFor(t *testing.T) {
	t.Parallel()
	var c listCache
	list := strings.Repeat("x", 1<<20) // shared by every entry: no memory of its own
	c.put("asked", "the asked list")
	c.put("stale", "a list of an earlier count of games")
	for i := range 5 * listCacheBytes / len(list) {
		c.put(fmt.Sprint("other ", i), list)
		if got := c.get("asked"); got != "the asked list" {
			t.Fatalf("after %d lists more, the list asked for each time is %q", i+1, got)
		}
		held := 0
		for _, gen := range []map[string]string{c.recent, c.older} {
			for k, v := range gen {
				held += len(k) + len(v)
			}
		}
		if held > 2*listCacheBytes+len(list)+100 {
			t.Fatalf("after %d lists more, %d bytes are kept: past two generations' %d", i+1, held, 2*listCacheBytes)
		}
	}
	if got := c.get("stale"); got != "" {
		t.Errorf("a list never asked for again is still kept after five generations' worth of lists")
	}
	if got := c.get("never kept"); got != "" {
		t.Errorf("a list never kept: %q", got)
	}
}
