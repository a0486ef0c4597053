package broker_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// TestFilteredPopBodySizedByWhatMatches: a TAG-filtered POP that scans 40
// messages of 256 KiB its filter rejects and returns one small message
// answers with a body sized by that message, not by everything it read
// (the body was grown for every record read, matched or not: 10 MiB held
// until the reply was written).
func TestFilteredPopBodySizedByWhatMatches(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "T", 1)
	record := func(tag, body string) []byte {
		m := codec.MessageExt{Message: codec.Message{Topic: "T", Body: []byte(body)},
			BornHost: netip.MustParseAddrPort("127.0.0.1:1"), StoreHost: netip.MustParseAddrPort("127.0.0.1:2"),
			BornTimestamp: f.Broker.Now(), StoreTimestamp: f.Broker.Now()}
		m.Properties, _ = codec.SetProperty("", codec.PropertyTags, tag)
		rec, err := codec.AppendMessage(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	err := brokertest.Await0(t, func(done func(error)) {
		op := &batch.Op{Lane: batch.LaneProduce, Bytes: 64, Done: done,
			Apply: func(tx *popstore.Txn) error {
				for range 40 {
					if _, _, err := tx.AppendMessage("T", 0, record("B", strings.Repeat("b", 256<<10))); err != nil {
						return err
					}
				}
				_, _, err := tx.AppendMessage("T", 0, record("A", "match"))
				return err
			}}
		if err := f.Writer.Submit(op); err != nil {
			done(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r := popReq("G", "T", 32)
	r.ExpType, r.Exp = "TAG", "A"
	res, msgs := popMessages(t, f, r)
	if len(msgs) != 1 || string(msgs[0].m.Body) != "match" {
		t.Fatalf("got %d messages, want the one tagged A", len(msgs))
	}
	if c := cap(res.Body); c > 64<<10 {
		t.Fatalf("reply body of %d bytes has a capacity of %d bytes", len(res.Body), c)
	}
}
