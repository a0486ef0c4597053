package broker_test

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/transaction"
)

// groupChecker is a Checker with producers of one group connected only:
// what a protocol adapter with one producer looks like.
type groupChecker struct {
	group string
	mu    sync.Mutex
	got   []string // producer groups of the checks it sent
}

func (c *groupChecker) Check(ch transaction.Check) bool {
	if ch.ProducerGroup != c.group {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, ch.ProducerGroup)
	return true
}

func (c *groupChecker) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// TestTransactionCheckersPerProtocol: with two Checkers added (one per
// protocol), each half's check reaches the one that has its group; after
// one is removed its group's checks are counted unsent.
func TestTransactionCheckersPerProtocol(t *testing.T) {
	f := brokertest.Start(t, txnConfig(t, 1000), nil)
	createTopic(t, f, "TxnTopic", 1)
	a, b := &groupChecker{group: "PA"}, &groupChecker{group: "PB"}
	f.Broker.Transactions.AddChecker(a)
	removeB := f.Broker.Transactions.AddChecker(b)
	prepare(t, f, halfMessage(f, "TxnTopic", "PA", "a"))
	prepare(t, f, halfMessage(f, "TxnTopic", "PB", "b"))
	f.Broker.AdvanceClock(6_001)
	waitUntil(t, "checks through both", func() bool { return a.count() >= 1 && b.count() >= 1 })
	for _, c := range []*groupChecker{a, b} {
		c.mu.Lock()
		for _, g := range c.got {
			if g != c.group {
				t.Errorf("checker of %s sent a check of %s", c.group, g)
			}
		}
		c.mu.Unlock()
	}
	removeB()
	seenB := b.count()
	unsent := f.Broker.Transactions.Metrics().Unsent
	before := testutil.ToFloat64(unsent)
	waitUntil(t, "an unsent round of PB", func() bool { return testutil.ToFloat64(unsent) > before })
	if b.count() != seenB {
		t.Fatalf("a removed checker still got checks")
	}
}
