package healthcheck

import (
	stdjson "encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// prepare readies, once per process and off the caller's path, what the
// first handshake and discovery would otherwise build while the server
// waits: the SDK's decoders for the answers (it decodes with
// segmentio/encoding, which builds a type's decoder at its first use, some
// tenths of a millisecond for a list's result), and the standard library's
// encoders for the requests. A server process takes milliseconds to start
// before it answers; this runs in that time. The caches it fills are the
// ones the SDK reads, so nothing is decoded differently
// (TestPrepareFillsTheSDKsCache).
var prepare = sync.OnceFunc(func() { go prepareCodecs() })

func prepareCodecs() {
	prepareDecoders()
	prepareEncoders()
}

// prepareDecoders builds the SDK's decoders of the answers, in the order
// they come: the handshake's, then the lists'. The handshake is
// initialize's: mcptray offers it first (Options.PreferLegacy), and the
// few servers that refuse it have server/discover's answer decoded as it
// comes.
func prepareDecoders() {
	for _, v := range []any{
		new(mcp.InitializeResult),
		new(mcp.ListToolsResult), new(mcp.ListResourcesResult),
		new(mcp.ListResourceTemplatesResult), new(mcp.ListPromptsResult),
	} {
		_ = segjson.Unmarshal([]byte(`{}`), v)
	}
	_, _ = jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
}

// prepareEncoders builds the standard library's encoders of the requests.
func prepareEncoders() {
	for _, v := range []any{
		&mcp.ListToolsParams{}, &mcp.ListResourcesParams{},
		&mcp.ListResourceTemplatesParams{}, &mcp.ListPromptsParams{},
		&mcp.ServerCapabilities{},
	} {
		_, _ = stdjson.Marshal(v)
	}
}
