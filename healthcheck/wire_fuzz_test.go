package healthcheck

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// nopWriteCloser discards what the wire writes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// FuzzWireLines feeds arbitrary server output to the stdio wire: it must
// never panic or hang, and everything it hands the SDK is a message that
// encodes again.
func FuzzWireLines(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":"mcptray-probe-1","result":{}}`,
		`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`[]`,
		`banner line`,
		`{"jsonrpc":"2.0","method":"notifications\/cancelled","params":{"requestId":1}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"no\"}}\n\r\n{",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, w := io.Pipe()
		c := newStdioConn(context.Background(), nopWriteCloser{io.Discard}, r, (*Options)(nil).withDefaults())
		// A request in flight, so replies to id 1 are routed as answers.
		id, _ := jsonrpc.MakeID(float64(1))
		if err := c.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "tools/list"}); err != nil {
			t.Fatal(err)
		}
		go func() {
			w.Write(data)
			w.Close()
		}()
		for {
			msg, err := c.Read(context.Background())
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("read: %v", err)
				}
				break
			}
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("delivered %#v, which does not encode: %v", msg, err)
			}
		}
		c.shutdown()
		_ = c.stats()
	})
}
