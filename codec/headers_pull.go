package codec

// PullSysFlag bits of PullMessageRequestHeader.SysFlag
// (common/.../sysflag/PullSysFlag.java).
const (
	PullSysFlagCommitOffset int32 = 0x1  // apply CommitOffset
	PullSysFlagSuspend      int32 = 0x2  // long poll allowed
	PullSysFlagSubscription int32 = 0x4  // Subscription carried in the request
	PullSysFlagClassFilter  int32 = 0x8  // class filter (unsupported)
	PullSysFlagLitePull     int32 = 0x10 // lite pull (code 361)
)

// PullMessageRequestHeader is the header of PULL_MESSAGE (11) and
// LITE_PULL_MESSAGE (361): remoting/.../protocol/header/PullMessageRequestHeader.java.
// Required: consumerGroup, topic, queueId, queueOffset, maxMsgNums, sysFlag,
// commitOffset, suspendTimeoutMillis, subVersion.
type PullMessageRequestHeader struct {
	ConsumerGroup        string
	Topic                string
	QueueID              int32
	QueueOffset          int64 // first logical offset wanted
	MaxMsgNums           int32
	SysFlag              int32 // PullSysFlag* bits
	CommitOffset         int64 // consumer's committed offset, applied when PullSysFlagCommitOffset
	SuspendTimeoutMillis int64 // long-poll hold time, milliseconds
	Subscription         string
	SubVersion           int64
	ExpressionType       string // "TAG" (default when empty) or "SQL92"
	MaxMsgBytes          int32  // 0 when absent
	BrokerName           string // bname
}

// DecodePullMessageRequestHeader decodes a PULL request header; errors are
// *FieldError values naming the first bad field.
func DecodePullMessageRequestHeader(ext map[string]string) (PullMessageRequestHeader, error) {
	r := extReader{ext: ext}
	h := PullMessageRequestHeader{
		ConsumerGroup:        r.str("consumerGroup"),
		Topic:                r.str("topic"),
		QueueID:              r.i32("queueId"),
		QueueOffset:          r.i64("queueOffset"),
		MaxMsgNums:           r.i32("maxMsgNums"),
		SysFlag:              r.i32("sysFlag"),
		CommitOffset:         r.i64("commitOffset"),
		SuspendTimeoutMillis: r.i64("suspendTimeoutMillis"),
		Subscription:         r.optStr("subscription"),
		SubVersion:           r.i64("subVersion"),
		ExpressionType:       r.optStr("expressionType"),
		MaxMsgBytes:          r.optI32("maxMsgBytes", 0),
		BrokerName:           r.optStr("bname"),
	}
	return h, r.Err()
}

// Encode sets the request ext fields on c (client side, tests).
func (h PullMessageRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("consumerGroup", h.ConsumerGroup)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.i64("queueOffset", h.QueueOffset)
	w.i32("maxMsgNums", h.MaxMsgNums)
	w.i32("sysFlag", h.SysFlag)
	w.i64("commitOffset", h.CommitOffset)
	w.i64("suspendTimeoutMillis", h.SuspendTimeoutMillis)
	w.optStr("subscription", h.Subscription)
	w.i64("subVersion", h.SubVersion)
	w.optStr("expressionType", h.ExpressionType)
	if h.MaxMsgBytes != 0 {
		w.i32("maxMsgBytes", h.MaxMsgBytes)
	}
	w.optStr("bname", h.BrokerName)
}

// PullMessageResponseHeader is the header of a PULL response
// (remoting/.../protocol/header/PullMessageResponseHeader.java). The four
// offsets are always written: the Java client unboxes them for codes
// 0/19/20/21.
type PullMessageResponseHeader struct {
	SuggestWhichBrokerID int64 // 0 = master
	NextBeginOffset      int64
	MinOffset            int64
	MaxOffset            int64 // one past the last message
}

// Encode sets the response ext fields on c.
func (h PullMessageResponseHeader) Encode(c *Command) {
	w := extWriter{c}
	w.i64("suggestWhichBrokerId", h.SuggestWhichBrokerID)
	w.i64("nextBeginOffset", h.NextBeginOffset)
	w.i64("minOffset", h.MinOffset)
	w.i64("maxOffset", h.MaxOffset)
}

// DecodePullMessageResponseHeader reads a PULL response header; all four fields are required.
func DecodePullMessageResponseHeader(ext map[string]string) (PullMessageResponseHeader, error) {
	r := extReader{ext: ext}
	h := PullMessageResponseHeader{
		SuggestWhichBrokerID: r.i64("suggestWhichBrokerId"),
		NextBeginOffset:      r.i64("nextBeginOffset"),
		MinOffset:            r.i64("minOffset"),
		MaxOffset:            r.i64("maxOffset"),
	}
	return h, r.Err()
}
