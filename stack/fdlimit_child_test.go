package stack_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting/logtest"
	"github.com/popshim/popshim/stack"
	"github.com/popshim/popshim/stack/stacktest"
)

// A broker out of file descriptors. The parent re-executes this test
// binary running only TestChildUnderFDLimit with fdChildDirEnv set; the
// child lowers its soft RLIMIT_NOFILE to fdChildNofile, starts a stack
// (broker port and /metrics on 127.0.0.1, --max-conns=0 so accepts run
// into EMFILE instead of the connection bound), writes "<broker>
// <metrics>" to <dir>/child.addr and serves until SIGTERM, then closes
// the stack and exits.
const (
	fdChildDirEnv = "POPSHIM_STACK_FDLIMIT_CHILD_DIR"
	fdChildNofile = 256
	// fdFlood is how many raw connections the parent opens: well past
	// what fdChildNofile descriptors hold, well within the kernel's
	// accept queue (somaxconn, 4096 by default), so every dial completes.
	fdFlood = 400
)

// TestChildUnderFDLimit is the child side of
// TestBrokerSurvivesDescriptorExhaustion; it is skipped in a normal run.
func TestChildUnderFDLimit(t *testing.T) {
	dir := os.Getenv(fdChildDirEnv)
	if dir == "" {
		t.Skip("only runs as a child process of TestBrokerSurvivesDescriptorExhaustion")
	}
	var rl syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
	rl.Cur = fdChildNofile
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl))

	cfg := stacktest.Config(dir)
	cfg.NamesrvListen = ""
	cfg.MaxConns = 0
	st, err := stack.StartStack(cfg, zerolog.New(os.Stderr).Level(zerolog.InfoLevel))
	require.NoError(t, err)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	tmp := filepath.Join(dir, "child.addr.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(st.BrokerAddr()+" "+st.MetricsAddr()), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "child.addr")))
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), stacktest.CloseTimeout)
	defer cancel()
	require.NoError(t, st.Close(cctx))
}

// A burst of connections past RLIMIT_NOFILE must not take the broker
// down (gnet v2.9.7's own acceptor stopped the engine on EMFILE, closing
// the port and every connection): the process stays up, an open
// connection keeps getting HEART_BEAT answers while accepts stall, the
// connections queued meanwhile are all served once descriptors free up,
// a new client is served, the errors are counted and logged, and the
// broker still shuts down cleanly.
func TestBrokerSurvivesDescriptorExhaustion(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildUnderFDLimit$", "-test.count=1")
	cmd.Env = append(os.Environ(), fdChildDirEnv+"="+dir)
	var logs logtest.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	var waitErr error // cmd.Wait's result, set before exited is closed
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	var brokerAddr, metricsAddr string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "child.addr"))
		if err != nil {
			return false
		}
		f := strings.Fields(string(b))
		brokerAddr, metricsAddr = f[0], f[1]
		return true
	}, bound, 10*time.Millisecond, "the child broker did not start:\n%s", &logs)
	alive := func() {
		t.Helper()
		select {
		case <-exited:
			t.Fatalf("the child broker exited (%v):\n%s", waitErr, logs.String())
		default:
		}
	}

	first, err := client.Dial(brokerAddr)
	require.NoError(t, err)
	defer first.Close()
	requireHeartBeat(t, first)

	raw := make([]net.Conn, 0, fdFlood)
	defer func() {
		for _, nc := range raw {
			_ = nc.Close()
		}
	}()
	for i := range fdFlood {
		nc, err := net.DialTimeout("tcp", brokerAddr, 5*time.Second)
		require.NoError(t, err, "dial %d: the broker port must stay open", i)
		raw = append(raw, nc)
	}
	// The last connection is queued, not accepted: its HEART_BEAT waits.
	last := raw[len(raw)-1]
	_, err = last.Write(heartBeatFrame(int32(len(raw))))
	require.NoError(t, err)
	require.NoError(t, last.SetReadDeadline(time.Now().Add(500*time.Millisecond)))
	_, err = readReply(last)
	var ne net.Error
	require.ErrorAs(t, err, &ne, "no reply while accepts stall")
	require.True(t, ne.Timeout(), "no reply while accepts stall: %v", err)

	alive()
	requireHeartBeat(t, first) // an open connection is served throughout

	// Free descriptors: the accepted half goes away, the queued half is
	// accepted and every one of its HEART_BEATs answered.
	half := len(raw) / 2
	for _, nc := range raw[:half] {
		require.NoError(t, nc.Close())
	}
	rest := raw[half:]
	raw = rest
	for i, nc := range rest {
		require.NoError(t, nc.SetDeadline(time.Now().Add(bound)))
		if nc != last {
			_, err := nc.Write(heartBeatFrame(int32(i)))
			require.NoError(t, err)
		}
	}
	for i, nc := range rest {
		resp, err := readReply(nc)
		require.NoError(t, err, "queued connection %d of %d: its HEART_BEAT must be answered once accepted", i, len(rest))
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
	}
	fresh, err := client.Dial(brokerAddr)
	require.NoError(t, err)
	defer fresh.Close()
	requireHeartBeat(t, fresh)
	requireHeartBeat(t, first)
	alive()

	errs := scrapeCounter(t, metricsAddr, `popshim_remoting_accept_errors_total\{[^}]*reason="emfile"[^}]*server="broker"[^}]*\} (\S+)`)
	require.Positive(t, errs, "accept errors are counted")
	out := logs.String()
	require.Contains(t, out, "cannot accept a connection; open connections are still served")
	require.Contains(t, out, "accepting connections again")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-exited:
		require.NoError(t, waitErr, "the child broker shuts down cleanly:\n%s", out)
	case <-time.After(bound):
		t.Fatal("the child broker did not stop on SIGTERM")
	}
}

func heartBeatFrame(opaque int32) []byte {
	return codec.AppendFrame(nil, codec.NewRequest(codec.RequestHeartBeat, opaque, nil, []byte(`{"clientID":"fdlimit-test"}`)))
}

func requireHeartBeat(t *testing.T, c *client.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	resp, err := c.Invoke(ctx, codec.NewRequest(codec.RequestHeartBeat, 0, nil, []byte(`{"clientID":"fdlimit-test"}`)))
	require.NoError(t, err)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
}

// readReply reads one frame from a raw connection and decodes it.
func readReply(r io.Reader) (*codec.Command, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	f := make([]byte, 4+binary.BigEndian.Uint32(head[:]))
	copy(f, head[:])
	if _, err := io.ReadFull(r, f[4:]); err != nil {
		return nil, err
	}
	return codec.DecodeFrame(f)
}

// scrapeCounter returns the value the first match of pattern captures on
// the /metrics page at addr.
func scrapeCounter(t *testing.T, addr, pattern string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	m := regexp.MustCompile(pattern).FindSubmatch(body)
	require.NotNil(t, m, fmt.Sprintf("no %s in /metrics", pattern))
	v, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return v
}
