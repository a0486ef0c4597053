package codec

// EndTransactionRequestHeader is the header of END_TRANSACTION (37)
// (remoting/.../protocol/header/EndTransactionRequestHeader.java, plus the
// RPC base field bname). Required (a missing or unparsable value is a
// *FieldError): producerGroup, tranStateTableOffset, commitLogOffset,
// commitOrRollback, msgId. fromTransactionCheck defaults to false.
// Whether commitOrRollback is one of 0, 8, 12 (Java's checkFields) is
// left to the core, which words the refusal.
type EndTransactionRequestHeader struct {
	Topic                string // topic (the ACL resource; otherwise unused)
	ProducerGroup        string // producerGroup: must be the half's PGROUP
	TranStateTableOffset int64  // tranStateTableOffset: the SEND reply's queueOffset
	CommitLogOffset      int64  // commitLogOffset: decoded from the SEND reply's offsetMsgId
	CommitOrRollback     int32  // commitOrRollback: SysFlagTransactionCommit, ...Rollback or ...NotType
	FromTransactionCheck bool   // fromTransactionCheck: answering CHECK_TRANSACTION_STATE
	MsgID                string // msgId: the message's UNIQ_KEY (or msgId)
	TransactionID        string // transactionId (optional)
	BrokerName           string // bname (optional)
}

// DecodeEndTransactionRequestHeader decodes END_TRANSACTION's header;
// errors are *FieldError.
func DecodeEndTransactionRequestHeader(ext map[string]string) (EndTransactionRequestHeader, error) {
	r := extReader{ext: ext}
	h := EndTransactionRequestHeader{
		Topic:                r.optStr("topic"),
		ProducerGroup:        r.str("producerGroup"),
		TranStateTableOffset: r.i64("tranStateTableOffset"),
		CommitLogOffset:      r.i64("commitLogOffset"),
		CommitOrRollback:     r.i32("commitOrRollback"),
		FromTransactionCheck: r.optBool("fromTransactionCheck", false),
		MsgID:                r.str("msgId"),
		TransactionID:        r.optStr("transactionId"),
		BrokerName:           r.optStr("bname"),
	}
	return h, r.Err()
}

// Encode sets the request ext fields on c (what a producer sends).
func (h EndTransactionRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.optStr("topic", h.Topic)
	w.str("producerGroup", h.ProducerGroup)
	w.i64("tranStateTableOffset", h.TranStateTableOffset)
	w.i64("commitLogOffset", h.CommitLogOffset)
	w.i32("commitOrRollback", h.CommitOrRollback)
	w.boolean("fromTransactionCheck", h.FromTransactionCheck)
	w.str("msgId", h.MsgID)
	w.optStr("transactionId", h.TransactionID)
	w.optStr("bname", h.BrokerName)
}

// CheckTransactionStateRequestHeader is the header of the oneway
// broker→producer CHECK_TRANSACTION_STATE (39)
// (remoting/.../protocol/header/CheckTransactionStateRequestHeader.java,
// plus the RPC base field bname). tranStateTableOffset and
// commitLogOffset are required; the producer copies both, with its own
// group, into the END_TRANSACTION that answers.
type CheckTransactionStateRequestHeader struct {
	Topic                string // topic: the half's topic, RMQ_SYS_TRANS_HALF_TOPIC
	TranStateTableOffset int64  // tranStateTableOffset: the half's sequence number
	CommitLogOffset      int64  // commitLogOffset: the half's physical offset
	MsgID                string // msgId: the half's UNIQ_KEY
	TransactionID        string // transactionId: the half's UNIQ_KEY
	OffsetMsgID          string // offsetMsgId: store host + commitLogOffset
	BrokerName           string // bname: the checking broker
}

// Encode sets the request ext fields on c.
func (h CheckTransactionStateRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.optStr("topic", h.Topic)
	w.i64("tranStateTableOffset", h.TranStateTableOffset)
	w.i64("commitLogOffset", h.CommitLogOffset)
	w.optStr("msgId", h.MsgID)
	w.optStr("transactionId", h.TransactionID)
	w.optStr("offsetMsgId", h.OffsetMsgID)
	w.optStr("bname", h.BrokerName)
}

// DecodeCheckTransactionStateRequestHeader decodes the header (the
// producer side; tests and tools); errors are *FieldError.
func DecodeCheckTransactionStateRequestHeader(ext map[string]string) (CheckTransactionStateRequestHeader, error) {
	r := extReader{ext: ext}
	h := CheckTransactionStateRequestHeader{
		Topic:                r.optStr("topic"),
		TranStateTableOffset: r.i64("tranStateTableOffset"),
		CommitLogOffset:      r.i64("commitLogOffset"),
		MsgID:                r.optStr("msgId"),
		TransactionID:        r.optStr("transactionId"),
		OffsetMsgID:          r.optStr("offsetMsgId"),
		BrokerName:           r.optStr("bname"),
	}
	return h, r.Err()
}
