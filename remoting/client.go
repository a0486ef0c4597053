package remoting

import (
	"context"

	"github.com/popshim/popshim/client"
)

// The remoting client lives in package client, which links neither gnet
// nor the broker. Server-side code and tests, which import remoting
// anyway, reach it under these names too.
type (
	// Client is client.Conn.
	Client = client.Conn
	// ClientOptions is client.Options.
	ClientOptions = client.Options
	// Callback is client.Callback.
	Callback = client.Callback
	// HeadHandler is client.HeadHandler.
	HeadHandler = client.HeadHandler
)

// Dial is client.Dial: it connects to addr (host:port) with default
// options. Errors: the dial's, prefixed "client: dial".
func Dial(addr string) (*Client, error) { return client.Dial(addr) }

// DialContext is client.DialContext: it connects to addr and starts the
// connection's reader and writer goroutines; Close must be called to stop
// them. Errors: the dial's or the TLS handshake's.
func DialContext(ctx context.Context, addr string, opts ClientOptions) (*Client, error) {
	return client.DialContext(ctx, addr, opts)
}
