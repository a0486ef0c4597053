package batch_test

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/popshim/popshim/popstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gateHook is a WriteHook that can hold or fail chosen writes (by the
// store's write sequence number, from 1). It performs the real write.
type gateHook struct {
	mu      sync.Mutex
	holds   map[uint64]chan struct{} // write n waits until the channel is closed
	fails   map[uint64]error         // write n returns this error instead of writing
	entered chan uint64              // receives n when write n enters the hook
}

func newGateHook() *gateHook {
	return &gateHook{holds: map[uint64]chan struct{}{}, fails: map[uint64]error{}, entered: make(chan uint64, 1024)}
}

// hold makes write n wait; call the returned func to release it.
func (g *gateHook) hold(n uint64) func() {
	ch := make(chan struct{})
	g.mu.Lock()
	g.holds[n] = ch
	g.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (g *gateHook) fail(n uint64, err error) {
	g.mu.Lock()
	g.fails[n] = err
	g.mu.Unlock()
}

func (g *gateHook) hook(n uint64, write func() error) error {
	g.entered <- n
	g.mu.Lock()
	ch, err := g.holds[n], g.fails[n]
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
	if err != nil {
		return err
	}
	return write()
}

// waitEntered blocks until write n has entered the hook.
func (g *gateHook) waitEntered(t *testing.T, n uint64) {
	t.Helper()
	for got := range g.entered {
		if got == n {
			return
		}
		if got > n {
			t.Fatalf("write %d entered, waiting for %d", got, n)
		}
	}
}

// ckKey is a checkpoint key for tests.
func ckKey(vis, off int64) popstore.CheckpointKey {
	return popstore.CheckpointKey{VisibleAtMillis: vis, Group: "G", Topic: "T", QueueId: 0, QueueOffset: off}
}

// recorder collects Done results in call order.
type recorder struct {
	mu   sync.Mutex
	ids  []int
	errs map[int]error
	wg   sync.WaitGroup
}

func newRecorder() *recorder { return &recorder{errs: map[int]error{}} }

// done returns a Done callback for op id.
func (r *recorder) done(id int) func(error) {
	r.wg.Add(1)
	return func(err error) {
		r.mu.Lock()
		r.ids = append(r.ids, id)
		r.errs[id] = err
		r.mu.Unlock()
		r.wg.Done()
	}
}

func (r *recorder) wait() { r.wg.Wait() }

func (r *recorder) err(id int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.errs[id]
	if !ok {
		return fmt.Errorf("op %d not completed", id)
	}
	return e
}
