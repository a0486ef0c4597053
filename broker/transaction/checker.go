package transaction

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Check is one CHECK_TRANSACTION_STATE (39) to send: the header fields of
// remoting/.../protocol/header/CheckTransactionStateRequestHeader.java
// (with the RPC base field bname) and the body, as
// AbstractTransactionalMessageCheckListener.sendCheckMessage fills them.
type Check struct {
	// ProducerGroup selects the producer to ask (PGROUP); not a header
	// field.
	ProducerGroup string
	// Topic is the half's topic, HalfTopic (header "topic").
	Topic string
	// TranStateTableOffset is the half's sequence number, the SEND reply's
	// queueOffset (header "tranStateTableOffset").
	TranStateTableOffset int64
	// CommitLogOffset is the half's physical offset (header
	// "commitLogOffset").
	CommitLogOffset int64
	// MsgID is the half's UNIQ_KEY (header "msgId"); TransactionID the same
	// (header "transactionId").
	MsgID, TransactionID string
	// OffsetMsgID is the half's offsetMsgId (store host + physical
	// offset; header "offsetMsgId").
	OffsetMsgID string
	// BrokerName is this broker's name (header "bname").
	BrokerName string
	// Body is the half message in stored-record layout
	// (MessageDecoder.encode) with its real topic and queue, check count
	// included (TRANSACTION_CHECK_TIMES).
	Body []byte
}

// Checker sends a Check to one live producer of Check.ProducerGroup: the
// remoting adapter picks a connection that sent a HEART_BEAT naming the
// group (ProducerManager.getAvailableChannel) and writes the request
// oneway; a gRPC adapter would relay it on the producer's telemetry
// stream. Check is called on the check-back loop's goroutine, one call per
// half per round, after the round's check count is durable; it must not
// block on the network (queue the frame and return). sent=false when no
// producer of the group is connected (the round still counts, as in
// Java). Implementations must be safe for use from that goroutine while
// the protocol servers run.
type Checker interface {
	Check(c Check) (sent bool)
}

// CheckOf builds the Check of a half after a round raised its count to
// h.Checks: header fields from the half, body = the half with its real
// topic and queue; offsetMsgId from the record's store host, as the SEND
// reply gave it. Errors: ErrBadHalf.
func CheckOf(h *popstore.Half, brokerName string) (Check, error) {
	m, topic, qid, err := decodeHalf(h)
	if err != nil {
		return Check{}, err
	}
	uniq, _ := m.Property(codec.PropertyUniqClientMessageIDKeyIdx)
	c := Check{
		ProducerGroup:        h.ProducerGroup,
		Topic:                HalfTopic,
		TranStateTableOffset: h.Seq,
		CommitLogOffset:      h.PhysicalOffset,
		MsgID:                uniq,
		TransactionID:        uniq,
		OffsetMsgID:          codec.OffsetMsgID(m.StoreHost, h.PhysicalOffset),
		BrokerName:           brokerName,
	}
	m.Topic, m.QueueID = topic, qid
	if c.Body, err = codec.AppendMessage(nil, &m); err != nil {
		return Check{}, err
	}
	return c, nil
}
