package broker_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/clients"
)

// blockingNotifier records the groups announced and holds its first call
// until release is closed.
type blockingNotifier struct {
	mu      sync.Mutex
	calls   []string
	first   chan struct{} // closed when the first call started
	release chan struct{}
	once    sync.Once
}

func (n *blockingNotifier) NotifyConsumerIDsChanged(group string, _ []clients.ClientChannel) {
	n.mu.Lock()
	n.calls = append(n.calls, group)
	n.mu.Unlock()
	n.once.Do(func() { close(n.first); <-n.release })
}

func (n *blockingNotifier) count(group string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, g := range n.calls {
		if g == group {
			c++
		}
	}
	return c
}

// Membership changes are announced off the changing goroutine and once
// per group for all the changes made while an announcement was being
// sent: with the notifier stuck in its first call, 10 closing connections
// of GroupQ return at once, and GroupQ is then announced once more, not
// 10 times. Before, ConnClosed announced inline (it would wait on the
// stuck notifier) and once per close.
func TestCoreConsumerIDsAnnouncedOffLoopCoalesced(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	n := &blockingNotifier{first: make(chan struct{}), release: make(chan struct{})}
	f.Broker.SetConsumerIDsNotifier(n)
	mustHeartbeat(t, f, consumerHeartbeat("keep", 1, "GroupQ"))
	for i := range 11 {
		mustHeartbeat(t, f, consumerHeartbeat("c"+strconv.Itoa(i), uint64(100+i), "GroupQ"))
	}
	select { // the joins were announced; wait until the notifier is stuck
	case <-n.first:
	case <-time.After(10 * time.Second):
		t.Fatal("no announcement")
	}
	before := n.count("GroupQ")
	closed := make(chan struct{})
	go func() {
		for i := range 10 {
			f.Broker.ConnClosed(uint64(100 + i))
		}
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		close(n.release)
		t.Fatal("ConnClosed waited for the announcement")
	}
	close(n.release)
	deadline := time.Now().Add(10 * time.Second)
	for n.count("GroupQ") < before+1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // room for announcements that should not come
	if got := n.count("GroupQ") - before; got != 1 {
		t.Fatalf("GroupQ announced %d times for 10 closes while the notifier was stuck, want 1", got)
	}
}
