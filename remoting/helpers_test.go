package remoting

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// gnet's package-level ants goroutine pool starts these at init and
		// keeps them for the life of the process; they are not per-server.
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		// Engine enrollment (the plaintext side of a TLS session) runs on
		// that pool; an idle worker waits up to 10 s for its next task.
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
	)
}

// Request codes used by the tests; none is a real RocketMQ code.
const (
	codeEcho     int32 = 9001 // replies at once with the request body
	codeDeferred int32 = 9002 // replies later from other goroutines
	codePanic    int32 = 9003 // handler panics
)

func testLogger(t testing.TB) zerolog.Logger {
	if testing.Verbose() {
		return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
	}
	return zerolog.New(os.Stderr).Level(zerolog.ErrorLevel)
}

func echoHandler(c Conn, req *codec.Command) {
	resp := codec.NewResponse(req, 0, "")
	resp.Body = req.Body
	_ = c.Reply(resp)
}

// startServer runs a server on 127.0.0.1:0 and stops it at test end.
func startServer(t testing.TB, r *Router, opts ServerOptions) *Server {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	if opts.EventLoops == 0 {
		opts.EventLoops = 2
	}
	s := NewServer(opts, r, testLogger(t))
	require.NoError(t, s.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Stop(ctx))
	})
	return s
}

func dialClient(t testing.TB, s *Server) *client.Conn {
	t.Helper()
	c, err := client.Dial(s.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// dialRaw opens a plain TCP connection with a generous safety deadline, so
// a broken server fails the test instead of hanging it.
func dialRaw(t testing.TB, s *Server) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	require.NoError(t, err)
	require.NoError(t, nc.SetDeadline(time.Now().Add(20*time.Second)))
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// readFrame reads and decodes one frame from a raw connection.
func readFrame(t testing.TB, r io.Reader) *codec.Command {
	t.Helper()
	f, err := readRawFrame(r)
	require.NoError(t, err)
	cmd, err := codec.DecodeFrame(f)
	require.NoError(t, err)
	return cmd
}

func readRawFrame(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	f := make([]byte, 4+binary.BigEndian.Uint32(head[:]))
	copy(f, head[:])
	_, err := io.ReadFull(r, f[4:])
	return f, err
}

// expectClosed reads until the server closes the connection.
func expectClosed(t testing.TB, nc net.Conn) {
	t.Helper()
	_, err := io.Copy(io.Discard, nc)
	require.NoError(t, err, "expected EOF from server close, got a read error (timeout means not closed)")
}
