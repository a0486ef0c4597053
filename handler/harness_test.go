package handler_test

// Test harness for protocol-level tests of the handlers: a real popshim
// stack (StartStack: RocksDB in t.TempDir(), the group-commit writer, gnet
// servers on 127.0.0.1:0) driven by real remoting clients. Time-dependent
// scenarios move the broker clock (Broker.skewMillis) instead of sleeping:
// pop with a long invisible time, advance the clock past it, run revive.
// D2's tests reuse it.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/stack"
	"github.com/popshim/popshim/stack/stacktest"
)

// testBrokerName is the broker name of harness stacks (receipt field 5).
const testBrokerName = "broker-pop"

// waitFor bounds every polling loop of the tests: a condition that does not
// come true within it fails the test (it is a hang guard, not a timing
// assertion).
const waitFor = 20 * time.Second

// popConfig returns a configuration for a harness stack in dir: loopback
// port 0 everywhere, no metrics listener, small pools, fast revive passes.
func popConfig(dir string) *conf.Config {
	cfg := stacktest.Config(dir)
	cfg.NamesrvListen = ""
	cfg.MetricsListen = ""
	cfg.BrokerName = testBrokerName
	cfg.ClusterName = "ClusterPop"
	return cfg
}

// harness is one running stack plus what is needed to restart it.
type harness struct {
	t    *testing.T
	cfg  *conf.Config
	st   *stack.Stack
	opts []stack.Option // given to every start, also after a restart
}

// startHarness starts a stack in a fresh directory; mutate may adjust the
// configuration first. The stack is closed when the test ends.
func startHarness(t *testing.T, mutate func(*conf.Config)) *harness {
	t.Helper()
	return startHarnessHooked(t, nil, mutate)
}

// startSlowHarness is startHarness with every store write delayed by d
// (popstore.DelayHook), to provoke queueing.
func startSlowHarness(t *testing.T, d time.Duration, mutate func(*conf.Config)) *harness {
	t.Helper()
	return startHarnessHooked(t, popstore.DelayHook(d), mutate)
}

// startHarnessHooked is startHarness with hook around every synced store
// write (WithWriteHook), also after a restart.
func startHarnessHooked(t *testing.T, hook popstore.WriteHook, mutate func(*conf.Config)) *harness {
	t.Helper()
	var opts []stack.Option
	if hook != nil {
		opts = append(opts, stack.WithWriteHook(hook))
	}
	return startHarnessWith(t, mutate, opts...)
}

// startHarnessWith is startHarness with stack options, also after a
// restart.
func startHarnessWith(t *testing.T, mutate func(*conf.Config), opts ...stack.Option) *harness {
	t.Helper()
	cfg := popConfig(t.TempDir())
	if mutate != nil {
		mutate(cfg)
	}
	h := &harness{t: t, cfg: cfg, opts: opts}
	h.start()
	return h
}

func (h *harness) start() {
	h.t.Helper()
	h.st = stacktest.Start(h.t, h.cfg, h.opts...)
}

// stop closes the stack gracefully (idempotent); stacktest closes it at
// test end anyway.
func (h *harness) stop() {
	if h.st == nil {
		return
	}
	// Every read gives its reply room back once answered: room still taken
	// after the reads settle would shrink every later read's answers.
	svc := h.st.Broker.Svc
	for i := 0; i < 100 && svc.ReadingReplyBytes() != 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if n := svc.ReadingReplyBytes(); n != 0 {
		h.t.Errorf("%d bytes of reply room still taken at the stack's stop", n)
	}
	stacktest.Stop(h.t, h.st)
	h.st = nil
}

// restart closes the stack and starts a new one on the same directory.
// Clients of the old stack are disconnected; dial again.
func (h *harness) restart() {
	h.t.Helper()
	h.stop()
	h.start()
}

// b returns the running broker state.
func (h *harness) b() *handler.Broker { return h.st.Broker }

// addr returns the broker listen address.
func (h *harness) addr() string { return h.st.BrokerAddr() }

// dial opens a remoting client to the broker, closed at test end.
func (h *harness) dial() *client.Conn {
	h.t.Helper()
	return dialAddr(h.t, h.addr())
}

// dialAddr connects a remoting client to addr, closed at test end.
func dialAddr(t *testing.T, addr string) *client.Conn {
	t.Helper()
	c, err := client.Dial(addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// advance moves the broker clock forward by d (negative: back).
func (h *harness) advance(d time.Duration) { h.b().AdvanceClock(d.Milliseconds()) }

// reviveNow runs revive passes until one that started after this call has
// completed, so every checkpoint due before the call has been handled, and
// then delivers due timers (CONSUMER_SEND_MSG_BACK copies are timers).
func (h *harness) reviveNow() {
	h.t.Helper()
	defer h.timersNow()
	rv := h.b().Revive
	start := rv.Passes()
	deadline := time.Now().Add(waitFor)
	for rv.Passes() < start+2 {
		require.True(h.t, time.Now().Before(deadline), "revive passes did not run")
		rv.Trigger()
		time.Sleep(2 * time.Millisecond)
	}
}

// timersNow runs timer passes until one that started after this call has
// completed, so every timer due at the broker clock before the call has
// been delivered (durably).
func (h *harness) timersNow() {
	h.t.Helper()
	tl := h.b().Timers
	start := tl.Passes()
	deadline := time.Now().Add(waitFor)
	for tl.Passes() < start+2 {
		require.True(h.t, time.Now().Before(deadline), "timer passes did not run")
		tl.Trigger()
		time.Sleep(2 * time.Millisecond)
	}
}

// createTopic creates topic with queues read/write queues (perm 6) and
// waits until it is durable.
func (h *harness) createTopic(topic string, queues int32) {
	h.t.Helper()
	done := make(chan error, 1)
	err := h.b().Topics.Create(popstore.TopicMeta{TopicName: topic, ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: 6, TopicFilterType: "SINGLE_TAG"}, func(err error) { done <- err })
	require.NoError(h.t, err)
	select {
	case err := <-done:
		require.NoError(h.t, err)
	case <-time.After(waitFor):
		h.t.Fatal("topic creation not durable")
	}
}

// eventually polls cond every few milliseconds until it holds or waitFor
// passed (then the test fails with msg).
func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met: "+msg, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Child-process stacks for kill -9 tests. The parent re-executes the test
// binary running only TestChildStack with childDirEnv set; the child starts
// a stack on that directory, writes its address to <dir>/child.addr and
// blocks until it is killed.
const childDirEnv = "POPSHIM_HANDLER_CHILD_DIR"

// TestChildStack is the child side of the kill -9 tests; it is skipped in a
// normal run.
func TestChildStack(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("only runs as a child process of a kill -9 test")
	}
	st, err := stack.StartStack(popConfig(dir), zerolog.Nop())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child stack:", err)
		os.Exit(3)
	}
	tmp := filepath.Join(dir, "child.addr.tmp")
	if err := os.WriteFile(tmp, []byte(st.BrokerAddr()), 0o644); err != nil {
		os.Exit(4)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "child.addr")); err != nil {
		os.Exit(5)
	}
	select {} // until SIGKILL
}

// childStack is a stack running in a child process.
type childStack struct {
	cmd  *exec.Cmd
	addr string
}

// startChild runs a stack on dir in a child process and returns once it
// accepts connections.
func startChild(t *testing.T, dir string) *childStack {
	t.Helper()
	_ = os.Remove(filepath.Join(dir, "child.addr"))
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildStack$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	cs := &childStack{cmd: cmd}
	t.Cleanup(func() { cs.kill(t) })
	eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "child.addr"))
		if err != nil {
			return false
		}
		cs.addr = strings.TrimSpace(string(b))
		return true
	}, "child stack did not start")
	return cs
}

// kill sends SIGKILL (no shutdown of any kind) and reaps the child.
func (cs *childStack) kill(t *testing.T) {
	if cs.cmd.Process == nil || cs.cmd.ProcessState != nil {
		return
	}
	_ = cs.cmd.Process.Kill()
	_ = cs.cmd.Wait()
}

// startHarnessIn starts an in-process stack on an existing directory (after
// a child was killed there).
func startHarnessIn(t *testing.T, dir string) *harness {
	t.Helper()
	h := &harness{t: t, cfg: popConfig(dir)}
	h.start()
	t.Cleanup(h.stop)
	return h
}

// faultHook is a store WriteHook that refuses the next n synced writes
// (they never reach the WAL: the writer fails only those batches).
type faultHook struct {
	failNext atomic.Int32
	failed   atomic.Int32
}

func (f *faultHook) hook(_ uint64, write func() error) error {
	for {
		n := f.failNext.Load()
		if n <= 0 {
			return write()
		}
		if f.failNext.CompareAndSwap(n, n-1) {
			f.failed.Add(1)
			return fmt.Errorf("injected fault: %w", popstore.ErrWriteRejected)
		}
	}
}

// gateHook is a store WriteHook that, once armed, holds the next synced
// write until opened. A held write is also let go when the test ends
// (t.Context is cancelled before the harness's cleanups stop the stack),
// so a test that fails while holding it does not hang the package.
type gateHook struct {
	armed   atomic.Bool
	held    chan struct{} // closed when a write is being held
	release chan struct{} // closed by open
	once    sync.Once
	ended   <-chan struct{}
}

func (g *gateHook) hook(_ uint64, write func() error) error {
	if g.armed.CompareAndSwap(true, false) {
		close(g.held)
		select {
		case <-g.release:
		case <-g.ended:
		}
	}
	return write()
}

// open lets a held write (and every later one) go on; idempotent.
func (g *gateHook) open() { g.once.Do(func() { close(g.release) }) }

// newGateHook returns an unarmed gateHook bound to t's lifetime.
func newGateHook(t *testing.T) *gateHook {
	return &gateHook{held: make(chan struct{}), release: make(chan struct{}), ended: t.Context().Done()}
}

// startHookedHarness starts a stack with a WriteHook on the store, for
// fault-injection tests.
func startHookedHarness(t *testing.T, hook popstore.WriteHook) *harness {
	t.Helper()
	return startHookedHarnessWith(t, hook, 0)
}

// startHookedHarnessWith is startHookedHarness with SEND shedding after
// maxProduceWait (0: the test config's default, shedding off).
func startHookedHarnessWith(t *testing.T, hook popstore.WriteHook, maxProduceWait time.Duration) *harness {
	t.Helper()
	return startHarnessHooked(t, hook, func(c *conf.Config) {
		if maxProduceWait > 0 {
			c.WaitTimeMillsInSendQueue = int(maxProduceWait.Milliseconds())
		}
	})
}
