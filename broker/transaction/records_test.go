package transaction_test

import (
	"net/netip"
	"testing"

	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

func props(kv ...string) string {
	s := ""
	for i := 0; i < len(kv); i += 2 {
		s, _ = codec.SetProperty(s, kv[i], kv[i+1])
	}
	return s
}

// TestIsHalf follows SendMessageProcessor: TRAN_MSG parsed as
// Boolean.parseBoolean, except an old client's retry with a delay level.
func TestIsHalf(t *testing.T) {
	for _, c := range []struct {
		props     string
		reconsume int32
		want      bool
	}{
		{props(codec.PropertyTransactionPrepared, "true"), 0, true},
		{props(codec.PropertyTransactionPrepared, "TRUE"), 0, true},
		{props(codec.PropertyTransactionPrepared, "yes"), 0, false},
		{props(), 0, false},
		{props(codec.PropertyTransactionPrepared, "true", codec.PropertyDelayTimeLevel, "3"), 1, false},
		{props(codec.PropertyTransactionPrepared, "true", codec.PropertyDelayTimeLevel, "3"), 0, true},
	} {
		if got := transaction.IsHalf(c.props, c.reconsume); got != c.want {
			t.Errorf("IsHalf(%q, %d) = %v", c.props, c.reconsume, got)
		}
	}
}

// TestHalfRecordAndCommitRecord: the stored half is Java's (half topic,
// queue 0, REAL_* and __transactionId__ added, transaction bits cleared);
// the committed record restores topic and queue, sets the commit bits and
// the prepared offset, and keeps the half's properties.
func TestHalfRecordAndCommitRecord(t *testing.T) {
	m := &codec.MessageExt{
		Message: codec.Message{Topic: "T", Body: []byte("x"), Properties: props(codec.PropertyTransactionPrepared, "true",
			codec.PropertyUniqClientMessageIDKeyIdx, "U1")},
		QueueID: 3, SysFlag: codec.SysFlagTransactionPrepared, StoreTimestamp: 100,
		BornHost: netip.MustParseAddrPort("10.0.0.1:1"), StoreHost: netip.MustParseAddrPort("10.0.0.2:10911"),
	}
	rec, group, err := transaction.HalfRecord(m, "HeaderGroup")
	if err != nil || group != "HeaderGroup" {
		t.Fatalf("HalfRecord: %q %v", group, err)
	}
	if m.Topic != "T" || m.QueueID != 3 {
		t.Fatalf("input modified")
	}
	h, _, err := codec.DecodeMessage(rec)
	if err != nil || h.Topic != transaction.HalfTopic || h.QueueID != 0 || codec.TransactionType(h.SysFlag) != 0 {
		t.Fatalf("half %+v %v", h, err)
	}
	for k, want := range map[string]string{codec.PropertyRealTopic: "T", codec.PropertyRealQueueID: "3",
		codec.PropertyTransactionID: "U1", codec.PropertyProducerGroup: "HeaderGroup"} {
		if v, _ := h.Property(k); v != want {
			t.Errorf("half property %s = %q, want %q", k, v, want)
		}
	}
	f, err := transaction.CommitRecord(&popstore.Half{PhysicalOffset: 77, Checks: 2, Record: rec}, 500)
	if err != nil || f.Topic != "T" || f.QueueID != 3 {
		t.Fatalf("CommitRecord: %+v %v", f, err)
	}
	c, _, err := codec.DecodeMessage(f.Record)
	if err != nil || codec.TransactionType(c.SysFlag) != codec.SysFlagTransactionCommit || c.PreparedTransactionOffset != 77 || c.StoreTimestamp != 500 {
		t.Fatalf("committed %+v %v", c, err)
	}
	if v, _ := c.Property(codec.PropertyTransactionCheckTimes); v != "2" {
		t.Errorf("TRANSACTION_CHECK_TIMES %q", v)
	}
	if _, err := transaction.CommitRecord(&popstore.Half{Record: []byte("junk")}, 1); err == nil {
		t.Errorf("junk half committed")
	}
}

// TestCheckDelays: the first check comes CHECK_IMMUNITY_TIME_IN_SECONDS
// after the store time when it parses, else after the timeout; a
// producer's own decision is refused past max(immunity, timeout).
func TestCheckDelays(t *testing.T) {
	if d := transaction.FirstCheckDelay(props(), 6000); d != 6000 {
		t.Errorf("default %d", d)
	}
	if d := transaction.FirstCheckDelay(props(codec.PropertyCheckImmunityTimeInSeconds, "60"), 6000); d != 60000 {
		t.Errorf("immunity %d", d)
	}
	if d := transaction.FirstCheckDelay(props(codec.PropertyCheckImmunityTimeInSeconds, "x"), 6000); d != 6000 {
		t.Errorf("unparsable %d", d)
	}
	if _, ok := transaction.ImmunityMillis(props(), 6000); ok {
		t.Errorf("immunity without the property")
	}
	if ms, ok := transaction.ImmunityMillis(props(codec.PropertyCheckImmunityTimeInSeconds, "2"), 6000); !ok || ms != 6000 {
		t.Errorf("immunity below the timeout: %d %v", ms, ok)
	}
}
