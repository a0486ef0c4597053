package remoting

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// codeRefuse answers GO_AWAY from its handler, as a handler does when the
// writer is closed.
const codeRefuse int32 = 9005

func TestSupportsGoAwayAboveV5_3_1(t *testing.T) {
	require.False(t, SupportsGoAway(0))
	require.False(t, SupportsGoAway(VersionV5_3_1))
	require.True(t, SupportsGoAway(VersionV5_3_1+1))
	require.True(t, SupportsGoAway(codec.CurrentVersion))
}

// After Drain, new clients get GO_AWAY without reaching a handler, old
// clients are served, unknown codes still get 3, oneway requests are
// dropped, and a request dispatched before Drain still gets its own reply.
func TestDrainAnswersGoAwayByVersion(t *testing.T) {
	handled := make(chan int32, 16)
	got := make(chan int32, 4)
	errs := make(chan error, 4)
	release := map[string]chan struct{}{"early": make(chan struct{})}
	r := NewRouter()
	r.Handle(codeDeferred, releasedHandler(got, release, errs))
	r.Handle(codeEcho, func(c Conn, req *codec.Command) { handled <- req.Opaque; echoHandler(c, req) })
	s := startServer(t, r, ServerOptions{})
	c := dialClient(t, s)
	invoke := func(code, version int32) *codec.Command {
		t.Helper()
		req := codec.NewRequest(code, 0, nil, []byte("b"))
		req.Version = version
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		resp, err := c.Invoke(ctx, req)
		require.NoError(t, err)
		return resp
	}

	// Dispatched before Drain: owed, answered after it.
	early := make(chan *codec.Command, 1)
	require.NoError(t, c.InvokeAsync(codec.NewRequest(codeDeferred, 1, nil, []byte("early")),
		func(resp *codec.Command, err error) {
			if err != nil {
				resp = &codec.Command{Code: -1, Remark: err.Error()}
			}
			early <- resp
		}))
	<-got
	require.False(t, s.Draining())
	s.Drain()
	s.Drain()
	require.True(t, s.Draining())

	for _, v := range []int32{VersionV5_3_1 + 1, codec.CurrentVersion} {
		resp := invoke(codeEcho, v)
		require.Equal(t, codec.GoAway, resp.Code, "version %d", v)
		require.Equal(t, goAwayRemark, resp.Remark)
		require.Empty(t, resp.Body)
	}
	require.Empty(t, handled, "GO_AWAY requests must not reach their handler")

	old := invoke(codeEcho, VersionV5_3_1)
	require.Equal(t, codec.Success, old.Code)
	require.Equal(t, "b", string(old.Body))
	require.Len(t, handled, 1, "an old client's request runs its handler")
	<-handled

	require.Equal(t, codec.RequestCodeNotSupported, invoke(4242, codec.CurrentVersion).Code)

	ow := codec.NewRequest(codeEcho, 0, nil, nil)
	ow.Flag = codec.FlagOneway
	require.NoError(t, c.InvokeOneway(ow))
	require.Equal(t, codec.GoAway, invoke(codeEcho, codec.CurrentVersion).Code) // orders after the oneway
	require.Empty(t, handled, "a new client's oneway request is dropped while draining")

	close(release["early"])
	require.NoError(t, <-errs)
	resp := <-early
	require.Equal(t, codec.Success, resp.Code, "the request dispatched before Drain keeps its real result: %s", resp.Remark)
	require.Equal(t, "early", string(resp.Body))
}

// A handler's GO_AWAY reaches a new client as 1500 and an old client as
// SYSTEM_BUSY with the same remark, draining or not.
func TestHandlerGoAwayAdaptedToOldClients(t *testing.T) {
	r := NewRouter()
	r.Handle(codeRefuse, func(c Conn, req *codec.Command) {
		_ = c.Reply(codec.NewResponse(req, codec.GoAway, "writer closed"))
	})
	s := startServer(t, r, ServerOptions{})
	c := dialClient(t, s)
	for v, want := range map[int32]int32{VersionV5_3_1: codec.SystemBusy, 0: codec.SystemBusy, codec.CurrentVersion: codec.GoAway} {
		req := codec.NewRequest(codeRefuse, 0, nil, nil)
		req.Version = v
		resp, err := c.Invoke(context.Background(), req)
		require.NoError(t, err)
		require.Equal(t, want, resp.Code, "version %d", v)
		require.Equal(t, "writer closed", resp.Remark)
	}
}
