package broker_test

import (
	"testing"
	"time"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
)

// TestTransactionLateDecisionAfterCheckMax: a half moved to
// TRANS_CHECK_MAX_TIME_TOPIC still takes its producer's late decision, as
// Java's commit log keeps it: a commit, even after a restart, delivers the
// message once (a second commit finds nothing), a rollback removes it;
// neither is counted as pending. Once the store's retention has passed
// since the half was stored, the loop deletes it and a decision finds
// nothing.
func TestTransactionLateDecisionAfterCheckMax(t *testing.T) {
	cfg := txnConfig(t, 1)
	cfg.Retention = time.Hour
	f := brokertest.Start(t, cfg, nil)
	f.Broker.Transactions.SetChecker(&recordingChecker{})
	createTopic(t, f, "TxnTopic", 1)
	late := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "late"))
	back := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "back"))
	checkOutOnce(t, f, late, 2)
	if n := f.Store.PendingHalves(); n != 0 {
		t.Fatalf("%d halves pending after the moves", n)
	}

	f.Restart()
	if err := end(t, f, endReq("PG", late, codec.SysFlagTransactionCommit)); err != nil {
		t.Fatalf("late commit: %v", err)
	}
	wantCodeRemark(t, end(t, f, endReq("PG", late, codec.SysFlagTransactionCommit)), codec.SystemError, "Find prepared transaction message failed")
	msgs := popBodies(t, f, "G", "TxnTopic")
	if len(msgs) != 1 || string(msgs[0].Body) != "late" {
		t.Fatalf("got %d messages after the late commit", len(msgs))
	}
	if err := end(t, f, endReq("PG", back, codec.SysFlagTransactionRollback)); err != nil {
		t.Fatalf("late rollback: %v", err)
	}
	wantCodeRemark(t, end(t, f, endReq("PG", back, codec.SysFlagTransactionCommit)), codec.SystemError, "Find prepared transaction message failed")

	gone := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "gone"))
	checkOutOnce(t, f, gone, 3)
	f.Broker.AdvanceClock(time.Hour.Milliseconds())
	waitUntil(t, "the expiry", func() bool {
		_, ok, err := f.Store.Half(gone.PhysicalOffset)
		return err == nil && !ok
	})
	wantCodeRemark(t, end(t, f, endReq("PG", gone, codec.SysFlagTransactionCommit)), codec.SystemError, "Find prepared transaction message failed")
	if n := f.Store.PendingHalves(); n != 0 {
		t.Fatalf("%d halves pending", n)
	}
}

// checkOutOnce moves the clock through the one check round of
// --transaction-check-max 1 (waiting until r was checked) and the next,
// which moves r's half: TRANS_CHECK_MAX_TIME_TOPIC then holds moved
// messages.
func checkOutOnce(t *testing.T, f *brokertest.Fixture, r broker.HalfResult, moved int64) {
	t.Helper()
	f.Broker.AdvanceClock(6_001)
	waitUntil(t, "one check round", func() bool {
		h, ok, _ := f.Store.Half(r.PhysicalOffset)
		return ok && h.Checks == 1
	})
	f.Broker.AdvanceClock(f.Cfg.TransactionCheckInterval.Milliseconds() + 1)
	waitUntil(t, "the move", func() bool { return f.Store.MaxOffset(transaction.CheckMaxTopic, 0) == moved })
}
