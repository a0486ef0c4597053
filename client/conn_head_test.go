package client_test

import (
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// codeOutcome replies with the code named by the request's "want" ext
// field: SUCCESS without remark, SYSTEM_BUSY with a remark, or
// SYSTEM_ERROR with ext fields and a remark full of escapes. Each remark
// carries the request's "id", so a client can tell whose reply it got.
const codeOutcome int32 = 9006

func outcomeHandler(c remoting.Conn, req *codec.Command) {
	id := req.ExtFields["id"]
	var resp *codec.Command
	switch req.ExtFields["want"] {
	case "busy":
		resp = codec.NewResponse(req, codec.SystemBusy, "busy "+id)
	case "error":
		resp = codec.NewResponse(req, codec.SystemError, "err \"q\" \\ \n\t\x01 é "+id)
		resp.ExtFields = map[string]string{"popTime": "1700000000000", "k\"": "v\\", "id": id}
		resp.Body = []byte("ignored body")
	default:
		resp = codec.NewResponse(req, codec.Success, "")
	}
	_ = c.Reply(resp)
}

// headRecorder is a client.HeadHandler that checks it is called once and
// keeps what it got.
type headRecorder struct {
	mu    sync.Mutex
	calls int
	head  codec.ResponseHead
	err   error
	done  func()
}

func (h *headRecorder) HandleHead(head codec.ResponseHead, err error) {
	h.mu.Lock()
	h.calls++
	h.head, h.err = head, err
	h.mu.Unlock()
	h.done()
}

// Pipelined prepared requests completed by head (SUCCESS, SYSTEM_BUSY and an
// error reply with extFields and an escaped remark) and by full Command,
// interleaved: every handler is called once with its own reply's code,
// remark and the opaque the server saw.
func TestInvokePreparedHead(t *testing.T) {
	r := remoting.NewRouter()
	var mu sync.Mutex
	opaqueOf := map[string]int32{} // request id -> opaque the server saw
	r.Handle(codeOutcome, func(c remoting.Conn, req *codec.Command) {
		mu.Lock()
		opaqueOf[req.ExtFields["id"]] = req.Opaque
		mu.Unlock()
		outcomeHandler(c, req)
	})
	s := startServer(t, r, remoting.ServerOptions{})
	c := dialClient(t, s)
	wants := []string{"ok", "busy", "error"}
	const n = 600 // more than fit in one read, fewer than the pending ring
	var wg sync.WaitGroup
	heads := make([]*headRecorder, n)
	full := make([]*codec.Command, n)
	for i := range n {
		ext := map[string]string{"want": wants[i%3], "id": strconv.Itoa(i)}
		frame, at := codec.AppendPreparedFrame(nil, codec.NewRequest(codeOutcome, 0, ext, nil))
		wg.Add(1)
		if i%4 == 3 { // every fourth through the full decoder
			require.NoError(t, c.InvokePreparedAsync(frame, at, func(resp *codec.Command, err error) {
				defer wg.Done()
				if err == nil {
					full[i] = resp
				}
			}))
			continue
		}
		heads[i] = &headRecorder{done: wg.Done}
		require.NoError(t, c.InvokePreparedHead(frame, at, heads[i]))
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		id := strconv.Itoa(i)
		want := codec.ResponseHead{Opaque: opaqueOf[id], Flag: codec.FlagResponse}
		switch wants[i%3] {
		case "busy":
			want.Code, want.Remark = codec.SystemBusy, "busy "+id
		case "error":
			want.Code, want.Remark = codec.SystemError, "err \"q\" \\ \n\t\x01 é "+id
		}
		if heads[i] == nil {
			require.NotNil(t, full[i], "request %d", i)
			require.Equal(t, want, codec.ResponseHead{Code: full[i].Code, Opaque: full[i].Opaque, Flag: full[i].Flag, Remark: full[i].Remark})
			if wants[i%3] == "error" {
				require.Equal(t, id, full[i].ExtFields["id"], "full decoding keeps extFields")
			}
			continue
		}
		h := heads[i]
		require.Equal(t, 1, h.calls, "request %d", i)
		require.NoError(t, h.err)
		require.Equal(t, want, h.head, "request %d", i)
	}
	require.Zero(t, client.PendingCount(c))
}

// Head handlers still waiting when the client closes get the close error,
// exactly once each; a closed client refuses new ones without calling them.
func TestInvokePreparedHeadClose(t *testing.T) {
	r := remoting.NewRouter()
	r.Handle(codeDeferred, func(remoting.Conn, *codec.Command) {}) // never answers
	s := startServer(t, r, remoting.ServerOptions{})
	c := dialClient(t, s)
	frame, at := codec.AppendPreparedFrame(nil, codec.NewRequest(codeDeferred, 0, nil, nil))
	const n = 1500 // more than the ring: some wait in the overflow map
	var wg sync.WaitGroup
	hs := make([]*headRecorder, n)
	for i := range hs {
		wg.Add(1)
		hs[i] = &headRecorder{done: wg.Done}
		require.NoError(t, c.InvokePreparedHead(frame, at, hs[i]))
	}
	require.NoError(t, c.Close())
	wg.Wait()
	for _, h := range hs {
		require.Equal(t, 1, h.calls)
		require.ErrorIs(t, h.err, net.ErrClosed)
		require.Equal(t, codec.ResponseHead{}, h.head)
	}
	late := &headRecorder{done: func() { t.Error("handler of a refused request called") }}
	require.ErrorIs(t, c.InvokePreparedHead(frame, at, late), net.ErrClosed)
}
