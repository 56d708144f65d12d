package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one message of a client session's stream.
const maxLine = 64 << 20

// LineTransport is a client session's stream (a `mcptray connect`
// bridge's): one JSON-RPC message per line both ways. It reads line by
// line, so a large message costs its own size and no more, and a bad line
// is answered with a parse error instead of ending the session.
func LineTransport(r io.Reader, w io.Writer, closer io.Closer) mcp.Transport {
	return &lineTransport{r: r, w: w, c: closer}
}

type lineTransport struct {
	r io.Reader
	w io.Writer
	c io.Closer
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	return &lineConn{r: bufio.NewReaderSize(t.r, 64<<10), w: t.w, c: t.c, closed: make(chan struct{})}, nil
}

type lineConn struct {
	r *bufio.Reader // read by one goroutine (the SDK's reader)
	c io.Closer

	wmu sync.Mutex // serialises writes
	w   io.Writer

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		line, err := c.readLine()
		if len(line) > 0 {
			msg, derr := jsonrpc.DecodeMessage(line)
			if derr == nil {
				return msg, nil
			}
			// Not a message: the JSON-RPC answer to it is a parse error.
			c.writeRaw([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":%q}}`+"\n", "mcptray: not a JSON-RPC message: "+derr.Error())))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// readLine is the next non-empty line without its end.
func (c *lineConn) readLine() ([]byte, error) {
	var buf []byte
	for {
		part, err := c.r.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("a message of more than %d MiB", maxLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		for len(buf) > 0 && (buf[len(buf)-1] == '\n' || buf[len(buf)-1] == '\r') {
			buf = buf[:len(buf)-1]
		}
		return buf, err
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeRaw(append(data, '\n'))
}

func (c *lineConn) writeRaw(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(data)
	return err
}

func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.c != nil {
			err = c.c.Close()
		}
	})
	return err
}
