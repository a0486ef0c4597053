package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// TestTransactionHandleCommits: the handle of a half SEND's result, sent
// through its string form, finds the half for END_TRANSACTION; malformed
// handles are refused.
func TestTransactionHandleCommits(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 1)
	res := mustSend(t, f, halfSendReq(t, "TxnTopic", "handled"))
	h, err := broker.HalfHandle(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := broker.ParseTransactionHandle(h.String())
	if err != nil || back != h {
		t.Fatalf("round trip of %q: %+v %v", h.String(), back, err)
	}
	req := broker.EndTransactionRequest{ProducerGroup: "PG", CommitLogOffset: back.CommitLogOffset,
		TranStateTableOffset: back.TranStateTableOffset, CommitOrRollback: codec.SysFlagTransactionCommit}
	if err := end(t, f, req); err != nil {
		t.Fatalf("commit by handle: %v", err)
	}
	if n := len(readAll(t, f, "TxnTopic", 0)); n != 1 {
		t.Fatalf("%d messages committed", n)
	}
	for _, bad := range []string{"", "12", "x-1", "1-", "-1-2", "1-2-3"} {
		if _, err := broker.ParseTransactionHandle(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := broker.HalfHandle(broker.SendResult{OffsetMsgID: "nope"}); err == nil {
		t.Errorf("a result without offsetMsgId gave a handle")
	}
}
