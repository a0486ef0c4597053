package client_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// The Conn tests run against popshim's real remoting server (package
// remoting) on 127.0.0.1:0; an external test package, since remoting
// imports client.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// gnet's package-level ants goroutine pool starts these at init and
		// keeps them for the life of the process; they are not per-server.
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
	)
}

// Request codes used by the tests; none is a real RocketMQ code.
const (
	codeEcho      int32 = 9001 // replies at once with the request body
	codeDeferred  int32 = 9002 // never replies
	codeServerReq int32 = 9004 // sends a request to the client, then replies
)

func testLogger(t testing.TB) zerolog.Logger {
	if testing.Verbose() {
		return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
	}
	return zerolog.New(os.Stderr).Level(zerolog.ErrorLevel)
}

func echoHandler(c remoting.Conn, req *codec.Command) {
	resp := codec.NewResponse(req, 0, "")
	resp.Body = req.Body
	_ = c.Reply(resp)
}

// startServer runs a remoting server on 127.0.0.1:0 and stops it at test
// end.
func startServer(t testing.TB, r *remoting.Router, opts remoting.ServerOptions) *remoting.Server {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	if opts.EventLoops == 0 {
		opts.EventLoops = 2
	}
	s := remoting.NewServer(opts, r, testLogger(t))
	require.NoError(t, s.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Stop(ctx))
	})
	return s
}

// dialClient connects a Conn to s, closed at test end.
func dialClient(t testing.TB, s *remoting.Server) *client.Conn {
	t.Helper()
	c, err := client.Dial(s.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
