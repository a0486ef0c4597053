package remoting

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// A handler registered with HandleBorrowing sees the body during its call;
// with ScribbleBorrowedBodies the bytes are overwritten once it returned,
// while a Handle handler's body stays its own. The bodies kept are
// inspected by a later handler on the same connection (so on the same
// event loop goroutine, which owns the lent bytes), which answers with the
// bytes it finds at the end of each kept body.
func TestHandleBorrowingLendsBodyForTheCallOnly(t *testing.T) {
	const borrowCode, ownCode, inspectCode = 9001, 9002, 9003
	var lent, owned []byte // touched only by the connection's event loop
	echo := func(c Conn, req *codec.Command, keep *[]byte) {
		*keep = req.Body
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = append([]byte(nil), req.Body...)
		_ = c.Reply(resp)
	}
	r := NewRouter()
	r.HandleBorrowing(borrowCode, func(c Conn, req *codec.Command) { echo(c, req, &lent) })
	r.Handle(ownCode, func(c Conn, req *codec.Command) { echo(c, req, &owned) })
	r.Handle(inspectCode, func(c Conn, req *codec.Command) {
		kept := lent
		if string(req.Body) == "owned" {
			kept = owned
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = append([]byte(nil), kept[len(kept)-64:]...)
		_ = c.Reply(resp)
	})
	s := startServer(t, r, ServerOptions{ScribbleBorrowedBodies: true})
	c := dialClient(t, s)
	invoke := func(code int32, body []byte) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := c.Invoke(ctx, codec.NewRequest(code, 0, nil, body))
		require.NoError(t, err)
		return resp.Body
	}
	// The inspecting requests are small: their bytes do not reach the kept
	// bodies' last 64 bytes in the loop's read buffer.
	body := bytes.Repeat([]byte("borrowed body "), 300)
	require.Equal(t, body, invoke(borrowCode, body), "the borrowing handler saw the body during its call")
	require.Equal(t, bytes.Repeat([]byte{0xEE}, 64), invoke(inspectCode, []byte("lent")),
		"a borrowed body is scribbled after its handler returned")
	own := bytes.Repeat([]byte("owned body "), 400)
	require.Equal(t, own, invoke(ownCode, own))
	longer := bytes.Repeat([]byte("a longer borrowed body "), 300)
	require.Equal(t, longer, invoke(borrowCode, longer)) // overwrites the read buffer past own's end
	require.Equal(t, own[len(own)-64:], invoke(inspectCode, []byte("owned")), "a Handle handler owns its body")
}
