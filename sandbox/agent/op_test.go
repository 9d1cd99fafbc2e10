package agent

import (
	"bytes"
	"encoding/gob"
	"testing"
)

// An Op is its name on the wire: an agent or a client that sends the
// operation as a plain string understands, and is understood by, this one.
func TestAnOpIsAStringOnTheWire(t *testing.T) {
	ops := []Op{OpHello, OpInstall, OpTurn, OpRead, OpStart, OpSend, OpAsk, OpStop, OpReset, OpBye}
	for _, op := range ops {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(Request{Op: op, Name: "x"}); err != nil {
			t.Fatal(err)
		}
		var plain struct {
			Op   string
			Name string
		}
		if err := gob.NewDecoder(&buf).Decode(&plain); err != nil || plain.Op != string(op) || plain.Name != "x" {
			t.Fatalf("%s decoded as a string: %+v, %v", op, plain, err)
		}
		buf.Reset()
		if err := gob.NewEncoder(&buf).Encode(struct{ Op string }{string(op)}); err != nil {
			t.Fatal(err)
		}
		var req Request
		if err := gob.NewDecoder(&buf).Decode(&req); err != nil || req.Op != op {
			t.Fatalf("the string %q decoded as a Request: %+v, %v", op, req.Op, err)
		}
	}
}
