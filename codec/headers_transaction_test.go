package codec

import (
	"errors"
	"testing"
)

// TestEndTransactionHeaderRoundTrip: every field survives Encode and
// Decode; the fields Java marks @CFNotNull are required; a Java client's
// "fromTransactionCheck":"true" reads as true.
func TestEndTransactionHeaderRoundTrip(t *testing.T) {
	h := EndTransactionRequestHeader{Topic: "T", ProducerGroup: "PG", TranStateTableOffset: 7, CommitLogOffset: 1 << 40,
		CommitOrRollback: SysFlagTransactionRollback, FromTransactionCheck: true, MsgID: "U", TransactionID: "X", BrokerName: "b"}
	c := NewRequest(RequestEndTransaction, 1, nil, nil)
	h.Encode(c)
	got, err := DecodeEndTransactionRequestHeader(c.ExtFields)
	if err != nil || got != h {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, k := range []string{"producerGroup", "tranStateTableOffset", "commitLogOffset", "commitOrRollback", "msgId"} {
		ext := map[string]string{}
		for kk, v := range c.ExtFields {
			if kk != k {
				ext[kk] = v
			}
		}
		var fe *FieldError
		if _, err := DecodeEndTransactionRequestHeader(ext); !errors.As(err, &fe) || fe.Field != k {
			t.Errorf("without %s: %v", k, err)
		}
	}
	delete(c.ExtFields, "fromTransactionCheck")
	if got, _ := DecodeEndTransactionRequestHeader(c.ExtFields); got.FromTransactionCheck {
		t.Errorf("fromTransactionCheck defaults to false")
	}
}

// TestCheckTransactionStateHeaderRoundTrip: Encode writes Java's field
// names, Decode reads them back.
func TestCheckTransactionStateHeaderRoundTrip(t *testing.T) {
	h := CheckTransactionStateRequestHeader{Topic: "RMQ_SYS_TRANS_HALF_TOPIC", TranStateTableOffset: 3, CommitLogOffset: 99,
		MsgID: "U", TransactionID: "U", OffsetMsgID: "7F0000010000000000000063", BrokerName: "b"}
	c := NewRequest(RequestCheckTransactionState, 1, nil, nil)
	h.Encode(c)
	for _, k := range []string{"topic", "tranStateTableOffset", "commitLogOffset", "msgId", "transactionId", "offsetMsgId", "bname"} {
		if _, ok := c.ExtFields[k]; !ok {
			t.Errorf("missing %s", k)
		}
	}
	got, err := DecodeCheckTransactionStateRequestHeader(c.ExtFields)
	if err != nil || got != h {
		t.Fatalf("round trip: %+v %v", got, err)
	}
}
