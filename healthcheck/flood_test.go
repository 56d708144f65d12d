package healthcheck

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/registry"
)

// floodBatch is how many notifications the flood server sends before it
// answers each ping.
const floodBatch = 1000

// serveFlood is a minimal legacy stdio server: it answers initialize, and
// answers each ping after floodBatch small notifications/message.
func serveFlood(in io.Reader, out io.Writer) {
	w := bufio.NewWriterSize(out, 64<<10)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{}},"serverInfo":{"name":"flood","version":"1"}}}`+"\n", req.ID)
		case "ping":
			for i := range floodBatch {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"n%d"}}`+"\n", i)
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", req.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
		}
		w.Flush()
	}
}

// floodPipes runs serveFlood over OS pipes (as a real server's would be)
// and returns the client's ends.
func floodPipes(b *testing.B) (stdin io.WriteCloser, stdout io.ReadCloser) {
	b.Helper()
	sIn, cOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cIn, sOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveFlood(sIn, sOut)
		sOut.Close()
	}()
	b.Cleanup(func() {
		cOut.Close()
		<-done
		sIn.Close()
		cIn.Close()
	})
	return cOut, cIn
}

// BenchmarkNotificationFlood measures small notifications through the
// stdio wire, against a bare go-sdk IOTransport on the same server. Each
// op is one batch of floodBatch notifications followed by a ping reply.
func BenchmarkNotificationFlood(b *testing.B) {
	b.Run("mcptray", func(b *testing.B) {
		stdin, stdout := floodPipes(b)
		s, err := Connect(context.Background(), Target{Server: &registry.Server{Name: "flood", Command: "x"}, Stdin: stdin, Stdout: stdout, EraHint: EraLegacy}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for b.Loop() {
			if _, err := s.Probe(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*floodBatch)/b.Elapsed().Seconds(), "notifications/s")
	})
	b.Run("bare-sdk", func(b *testing.B) {
		stdin, stdout := floodPipes(b)
		cs, err := newClient((*Options)(nil).withDefaults()).Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin},
			&mcp.ClientSessionOptions{ProtocolVersion: LatestLegacyVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			if err := cs.Ping(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*floodBatch)/b.Elapsed().Seconds(), "notifications/s")
	})
}
