package codec

// PopMessageRequestHeader is the header of POP_MESSAGE (200050):
// remoting/.../protocol/header/PopMessageRequestHeader.java.
//
// Required: consumerGroup, topic, queueId, maxMsgNums, invisibleTime.
// pollTime, bornTime and initMode are Java primitives that real deployments
// omit (the proxy never sends bornTime, docs/SCENARIOS.md DEC-03); absent they
// read as 0, as in Java. A present but unparsable value is still an error.
type PopMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string // original (non-retry) topic
	QueueID       int32  // -1: any queue
	MaxMsgNums    int32  // at most 32 (the handler answers INVALID_PARAMETER above)
	InvisibleTime int64  // milliseconds
	PollTime      int64  // long-poll time, milliseconds; 0 = do not poll
	BornTime      int64  // client clock, milliseconds since epoch; 0 = use the broker clock
	InitMode      int32  // 0 = start at min offset, 1 = at max offset (ConsumeInitMode)
	ExpType       string // "TAG" / "SQL92"
	Exp           string // filter expression; "" means "*"
	Order         bool
	AttemptID     string
	BrokerName    string // bname
}

// Consume init modes of PopMessageRequestHeader.InitMode (common/.../constant/ConsumeInitMode.java).
const (
	ConsumeInitModeMin int32 = 0
	ConsumeInitModeMax int32 = 1
)

// DecodePopMessageRequestHeader decodes a POP request header; errors are
// *FieldError values naming the first bad field.
func DecodePopMessageRequestHeader(ext map[string]string) (PopMessageRequestHeader, error) {
	r := extReader{ext: ext}
	h := PopMessageRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		Topic:         r.str("topic"),
		QueueID:       r.i32("queueId"),
		MaxMsgNums:    r.i32("maxMsgNums"),
		InvisibleTime: r.i64("invisibleTime"),
		PollTime:      r.optI64("pollTime", 0),
		BornTime:      r.optI64("bornTime", 0),
		InitMode:      r.optI32("initMode", 0),
		ExpType:       r.optStr("expType"),
		Exp:           r.optStr("exp"),
		Order:         r.optBool("order", false),
		AttemptID:     r.optStr("attemptId"),
		BrokerName:    r.optStr("bname"),
	}
	return h, r.Err()
}

// Encode sets the request ext fields on c as the Java client does.
func (h PopMessageRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("consumerGroup", h.ConsumerGroup)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.i32("maxMsgNums", h.MaxMsgNums)
	w.i64("invisibleTime", h.InvisibleTime)
	w.i64("pollTime", h.PollTime)
	w.i64("bornTime", h.BornTime)
	w.i32("initMode", h.InitMode)
	w.optStr("expType", h.ExpType)
	w.optStr("exp", h.Exp)
	w.boolean("order", h.Order)
	w.optStr("attemptId", h.AttemptID)
	w.optStr("bname", h.BrokerName)
}

// PopMessageResponseHeader is the header of every POP response, whatever the
// code (remoting/.../protocol/header/PopMessageResponseHeader.java). popTime,
// invisibleTime, reviveQid and restNum are always written (Java primitives);
// the three info strings are written when non-empty, except that Encode
// writes startOffsetInfo and msgOffsetInfo as "" on non-success answers the
// way a Java broker does after an empty long poll (example E4) when
// EmptyInfo is true. Build the info strings with AppendStartOffsetInfo and
// friends (offset_info.go).
type PopMessageResponseHeader struct {
	PopTime         int64 // broker clock of this pop, milliseconds
	InvisibleTime   int64 // echo of the request, milliseconds
	ReviveQid       int32 // revive queue of the checkpoint; 999 for orderly pops
	RestNum         int64 // messages still available (hint)
	StartOffsetInfo string
	MsgOffsetInfo   string
	OrderCountInfo  string
	EmptyInfo       bool // write startOffsetInfo/msgOffsetInfo even when empty
}

// Encode sets the response ext fields on c.
func (h PopMessageResponseHeader) Encode(c *Command) {
	w := extWriter{c}
	w.i64("popTime", h.PopTime)
	w.i64("invisibleTime", h.InvisibleTime)
	w.i32("reviveQid", h.ReviveQid)
	w.i64("restNum", h.RestNum)
	if h.EmptyInfo {
		w.str("startOffsetInfo", h.StartOffsetInfo)
		w.str("msgOffsetInfo", h.MsgOffsetInfo)
	} else {
		w.optStr("startOffsetInfo", h.StartOffsetInfo)
		w.optStr("msgOffsetInfo", h.MsgOffsetInfo)
	}
	w.optStr("orderCountInfo", h.OrderCountInfo)
}

// DecodePopMessageResponseHeader reads a POP response header; the four numbers are required.
func DecodePopMessageResponseHeader(ext map[string]string) (PopMessageResponseHeader, error) {
	r := extReader{ext: ext}
	h := PopMessageResponseHeader{
		PopTime:         r.i64("popTime"),
		InvisibleTime:   r.i64("invisibleTime"),
		ReviveQid:       r.i32("reviveQid"),
		RestNum:         r.i64("restNum"),
		StartOffsetInfo: r.optStr("startOffsetInfo"),
		MsgOffsetInfo:   r.optStr("msgOffsetInfo"),
		OrderCountInfo:  r.optStr("orderCountInfo"),
	}
	return h, r.Err()
}

// AckMessageRequestHeader is the header of ACK_MESSAGE (200051):
// remoting/.../protocol/header/AckMessageRequestHeader.java. All five fields
// are required. Topic is the real topic (the pop retry topic for receipts
// with retry flag 1/2). ExtraInfo is the receipt handle, parse it with
// ParseExtraInfo (8 fields, or 9 from the proxy). The response has no header.
type AckMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	Offset        int64 // queue offset of the acked message (receipt field 7)
	ExtraInfo     string
	BrokerName    string // bname, optional
}

// DecodeAckMessageRequestHeader decodes an ACK request header without
// allocating (strings share the map's values); errors are *FieldError.
func DecodeAckMessageRequestHeader(ext map[string]string) (AckMessageRequestHeader, error) {
	return decodeAck(&extReader{ext: ext})
}

func decodeAck(r *extReader) (AckMessageRequestHeader, error) {
	h := AckMessageRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		Topic:         r.str("topic"),
		QueueID:       r.i32("queueId"),
		Offset:        r.i64("offset"),
		ExtraInfo:     r.str("extraInfo"),
		BrokerName:    r.optStr("bname"),
	}
	return h, r.Err()
}

// Encode sets the request ext fields on c as the Java client does.
func (h AckMessageRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("consumerGroup", h.ConsumerGroup)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.i64("offset", h.Offset)
	w.str("extraInfo", h.ExtraInfo)
	w.optStr("bname", h.BrokerName)
}

// ChangeInvisibleTimeRequestHeader is the header of
// CHANGE_MESSAGE_INVISIBLETIME (200053):
// remoting/.../protocol/header/ChangeInvisibleTimeRequestHeader.java. All
// six fields are required.
type ChangeInvisibleTimeRequestHeader struct {
	ConsumerGroup string
	Topic         string // real topic, as for ACK
	QueueID       int32
	Offset        int64 // the message's queue offset (receipt field 7)
	ExtraInfo     string
	InvisibleTime int64 // new invisible duration from now, milliseconds
	BrokerName    string
}

// DecodeChangeInvisibleTimeRequestHeader decodes the request; errors are *FieldError.
func DecodeChangeInvisibleTimeRequestHeader(ext map[string]string) (ChangeInvisibleTimeRequestHeader, error) {
	return decodeChange(&extReader{ext: ext})
}

func decodeChange(r *extReader) (ChangeInvisibleTimeRequestHeader, error) {
	h := ChangeInvisibleTimeRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		Topic:         r.str("topic"),
		QueueID:       r.i32("queueId"),
		Offset:        r.i64("offset"),
		ExtraInfo:     r.str("extraInfo"),
		InvisibleTime: r.i64("invisibleTime"),
		BrokerName:    r.optStr("bname"),
	}
	return h, r.Err()
}

// Encode sets the request ext fields on c as the Java client does.
func (h ChangeInvisibleTimeRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("consumerGroup", h.ConsumerGroup)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.i64("offset", h.Offset)
	w.str("extraInfo", h.ExtraInfo)
	w.i64("invisibleTime", h.InvisibleTime)
	w.optStr("bname", h.BrokerName)
}

// ChangeInvisibleTimeResponseHeader is the SUCCESS header of
// CHANGE_MESSAGE_INVISIBLETIME (ChangeInvisibleTimeResponseHeader.java);
// the client builds the new receipt from these three values, so all are
// always written.
type ChangeInvisibleTimeResponseHeader struct {
	PopTime       int64 // milliseconds; now for normal receipts
	InvisibleTime int64 // milliseconds
	ReviveQid     int32
}

// Encode sets the response ext fields on c.
func (h ChangeInvisibleTimeResponseHeader) Encode(c *Command) {
	w := extWriter{c}
	w.i64("popTime", h.PopTime)
	w.i64("invisibleTime", h.InvisibleTime)
	w.i32("reviveQid", h.ReviveQid)
}

// DecodeChangeInvisibleTimeResponseHeader reads the response header; all fields required.
func DecodeChangeInvisibleTimeResponseHeader(ext map[string]string) (ChangeInvisibleTimeResponseHeader, error) {
	r := extReader{ext: ext}
	h := ChangeInvisibleTimeResponseHeader{PopTime: r.i64("popTime"), InvisibleTime: r.i64("invisibleTime"), ReviveQid: r.i32("reviveQid")}
	return h, r.Err()
}

// NotificationRequestHeader is the header of NOTIFICATION (200054):
// remoting/.../protocol/header/NotificationRequestHeader.java. Required:
// consumerGroup, topic, queueId; pollTime and bornTime read as 0 when absent.
type NotificationRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32 // -1: any queue
	PollTime      int64 // milliseconds
	BornTime      int64 // milliseconds since epoch; 0 = broker clock
	Order         bool
	AttemptID     string
	BrokerName    string
}

// DecodeNotificationRequestHeader decodes the request; errors are *FieldError.
func DecodeNotificationRequestHeader(ext map[string]string) (NotificationRequestHeader, error) {
	r := extReader{ext: ext}
	h := NotificationRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		Topic:         r.str("topic"),
		QueueID:       r.i32("queueId"),
		PollTime:      r.optI64("pollTime", 0),
		BornTime:      r.optI64("bornTime", 0),
		Order:         r.optBool("order", false),
		AttemptID:     r.optStr("attemptId"),
		BrokerName:    r.optStr("bname"),
	}
	return h, r.Err()
}

// Encode sets the request ext fields on c.
func (h NotificationRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("consumerGroup", h.ConsumerGroup)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.i64("pollTime", h.PollTime)
	w.i64("bornTime", h.BornTime)
	w.boolean("order", h.Order)
	w.optStr("attemptId", h.AttemptID)
	w.optStr("bname", h.BrokerName)
}

// NotificationResponseHeader is the SUCCESS header of NOTIFICATION
// (NotificationResponseHeader.java). A full polling table is SUCCESS with
// HasMsg false and PollingFull true.
type NotificationResponseHeader struct {
	HasMsg      bool
	PollingFull bool
}

// Encode sets the response ext fields on c (both always written).
func (h NotificationResponseHeader) Encode(c *Command) {
	w := extWriter{c}
	w.boolean("hasMsg", h.HasMsg)
	w.boolean("pollingFull", h.PollingFull)
}

// DecodeNotificationResponseHeader reads the response header (lenient: absent is false).
func DecodeNotificationResponseHeader(ext map[string]string) (NotificationResponseHeader, error) {
	r := extReader{ext: ext}
	return NotificationResponseHeader{HasMsg: r.optBool("hasMsg", false), PollingFull: r.optBool("pollingFull", false)}, nil
}

// PeekMessageRequestHeader is the header of PEEK_MESSAGE (200052)
// (PeekMessageRequestHeader.java); all four fields are required. The
// response uses PopMessageResponseHeader.
type PeekMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	MaxMsgNums    int32
}

// DecodePeekMessageRequestHeader decodes the request; errors are *FieldError.
func DecodePeekMessageRequestHeader(ext map[string]string) (PeekMessageRequestHeader, error) {
	r := extReader{ext: ext}
	h := PeekMessageRequestHeader{ConsumerGroup: r.str("consumerGroup"), Topic: r.str("topic"), QueueID: r.i32("queueId"), MaxMsgNums: r.i32("maxMsgNums")}
	return h, r.Err()
}
