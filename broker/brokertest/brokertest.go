// Package brokertest runs the core (broker.Broker) for tests without any
// socket: a real RocksDB store in t.TempDir(), the real group-commit
// writer, the core started, and synchronous adapters (Await) over the
// core's completion callbacks. Test code only; it must not start a
// listener or import a protocol package.
package brokertest

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
)

// BrokerName is the brokerName of every fixture (it appears in receipt
// handles and routes).
const BrokerName = "popshim-test"

// Config returns a configuration for a core over data directory dir: small
// pools, a fast revive loop, no retention pass, no SEND time shedding and
// no disk guard (a slow -race run or a nearly full CI disk must not turn
// SENDs into refusals), and no listeners.
func Config(dir string) *conf.Config {
	cfg := conf.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NamesrvListen = ""
	cfg.MetricsListen = ""
	cfg.DataDir = dir
	cfg.BrokerIP = "127.0.0.1"
	cfg.BrokerName = BrokerName
	cfg.ClusterName = "ClusterPop"
	cfg.PopReaderWorkers = 2
	cfg.SyncWorkers = 2
	cfg.ReviveInterval = 20 * time.Millisecond
	cfg.RetentionInterval = -1
	cfg.WaitTimeMillsInSendQueue = 0
	cfg.DiskSpaceWarningLevelRatio = 0
	cfg.DiskSpaceCleanForciblyRatio = 0
	return cfg
}

// Fixture is one running core over a real store and writer.
type Fixture struct {
	T      testing.TB
	Cfg    *conf.Config
	Store  *popstore.Store
	Writer *batch.Writer
	Broker *broker.Broker
}

// Start opens a store in cfg.DataDir (Config(t.TempDir()) when cfg is
// nil), starts the writer and the core, and registers their shutdown with
// t.Cleanup. hook, when not nil, wraps every synced store write (inject
// slowness or faults: popstore.Options.WriteHook, popstore.DelayHook).
func Start(t testing.TB, cfg *conf.Config, hook popstore.WriteHook) *Fixture {
	t.Helper()
	if cfg == nil {
		cfg = Config(t.TempDir())
	}
	f := &Fixture{T: t, Cfg: cfg}
	f.open(hook)
	t.Cleanup(f.Close)
	return f
}

func (f *Fixture) open(hook popstore.WriteHook) {
	f.T.Helper()
	cfg := f.Cfg
	// The store's retention is cfg.Retention (what the check-back loop
	// reads); its deletion pass never runs (RetentionInterval -1 below).
	keep := int64(-1)
	if cfg.Retention > 0 {
		keep = cfg.Retention.Milliseconds()
	}
	st, err := popstore.Open(popstore.Options{Dir: cfg.DataDir, RetentionMillis: keep, WriteHook: hook})
	if err != nil {
		f.T.Fatalf("brokertest: open store: %v", err)
	}
	mode, err := batch.ParseMode(cfg.PopWriteMode)
	if err != nil {
		f.T.Fatalf("brokertest: %v", err)
	}
	w, err := batch.New(st, batch.Options{Mode: mode, SyncWorkers: cfg.SyncWorkers, MaxBatchOps: cfg.BatchMaxOps,
		MaxBatchBytes: cfg.BatchMaxBytes, LaneCapacity: cfg.QueueCapacity, BackgroundShare: cfg.BackgroundShare,
		MaxBulkOps: cfg.BatchMaxBulkOps, RetentionInterval: -1, MaxQueuedBytes: cfg.QueueMaxBytes,
		ProbeInterval: cfg.WriterProbeInterval}, nil)
	if err != nil {
		_ = st.Close()
		f.T.Fatalf("brokertest: writer: %v", err)
	}
	b, err := broker.New(cfg, zerolog.Nop(), st, w, nil)
	if err != nil {
		_ = w.Close()
		_ = st.Close()
		f.T.Fatalf("brokertest: core: %v", err)
	}
	b.Start()
	f.Store, f.Writer, f.Broker = st, w, b
}

// Close stops the core, drains and closes the writer, and closes the
// store. Idempotent.
func (f *Fixture) Close() {
	if f.Broker == nil {
		return
	}
	f.Broker.Close()
	_ = f.Writer.Close()
	_ = f.Store.Close()
	f.Broker, f.Writer, f.Store = nil, nil, nil
}

// Restart closes the core, writer and store and opens them again over the
// same directory, as a process restart would.
func (f *Fixture) Restart() {
	f.T.Helper()
	f.Close()
	f.open(nil)
}

// AwaitTimeout bounds every Await: a completion that never comes fails the
// test instead of hanging it. It is a liveness bound, not a measurement.
const AwaitTimeout = 30 * time.Second

// Await calls op with a completion callback and waits for it: the value
// and error the operation completed with. A callback called twice fails
// the test (operations complete exactly once).
func Await[T any](t testing.TB, op func(done func(T, error))) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 2)
	op(func(v T, err error) { ch <- result{v, err} })
	select {
	case r := <-ch:
		select {
		case <-ch:
			t.Fatalf("brokertest: operation completed twice")
		default:
		}
		return r.v, r.err
	case <-time.After(AwaitTimeout):
		t.Fatalf("brokertest: operation did not complete within %v", AwaitTimeout)
	}
	var zero T
	return zero, nil
}

// Await0 is Await for operations that complete with an error only.
func Await0(t testing.TB, op func(done func(error))) error {
	t.Helper()
	_, err := Await(t, func(done func(struct{}, error)) {
		op(func(err error) { done(struct{}{}, err) })
	})
	return err
}
