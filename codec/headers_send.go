package codec

import "strconv"

// SendMessageRequestHeader is the header of SEND_MESSAGE (10), SEND_MESSAGE_V2
// (310), SEND_BATCH_MESSAGE (320) and SEND_REPLY_MESSAGE(_V2) (324/325):
// remoting/.../protocol/header/SendMessageRequestHeader.java (long names,
// codes 10 and 324) and SendMessageRequestHeaderV2.java (single letters a..n,
// codes 310, 320, 325). Both decode into this one struct.
//
// Required (a missing or unparsable value is a *FieldError): ProducerGroup
// (producerGroup / a), Topic (topic / b), QueueID (queueId / e), SysFlag
// (sysFlag / f), BornTimestamp (bornTimestamp / g), Flag (flag / h).
// DefaultTopic / DefaultTopicQueueNums are @CFNotNull in Java but only serve
// topic auto-creation, so popshim reads them leniently (checked when present).
type SendMessageRequestHeader struct {
	ProducerGroup         string // a
	Topic                 string // b
	DefaultTopic          string // c, normally "TBW102"
	DefaultTopicQueueNums int32  // d
	QueueID               int32  // e; negative: the broker picks a writable queue
	SysFlag               int32  // f; message sysFlag bits (SysFlag* constants)
	BornTimestamp         int64  // g; producer clock, milliseconds since epoch
	Flag                  int32  // h; user flag copied into the stored record
	Properties            string // i; properties string (DecodeProperties)
	ReconsumeTimes        int32  // j; 0 when absent
	UnitMode              bool   // k
	MaxReconsumeTimes     int32  // l; meaningful only when HasMaxReconsumeTimes
	HasMaxReconsumeTimes  bool
	Batch                 bool   // m; true for SEND_BATCH_MESSAGE
	BrokerName            string // n in V2, base field bname in V1
}

// sendKeys are the ext keys of one header spelling.
type sendKeys struct {
	group, topic, defTopic, defQueues, queueID, sysFlag, born, flag, props, reconsume, unit, maxReconsume, batch, bname string
}

var (
	sendKeysV1 = sendKeys{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
		"bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch", "bname"}
	sendKeysV2 = sendKeys{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"}
)

func decodeSend(ext map[string]string, k *sendKeys) (SendMessageRequestHeader, error) {
	r := extReader{ext: ext}
	return decodeSendFrom(&r, k)
}

// decodeSendFrom reads a SEND header in spelling k from r.
func decodeSendFrom(r *extReader, k *sendKeys) (SendMessageRequestHeader, error) {
	var h SendMessageRequestHeader
	h.ProducerGroup = r.str(k.group)
	h.Topic = r.str(k.topic)
	h.DefaultTopic = r.optStr(k.defTopic)
	h.DefaultTopicQueueNums = r.optI32(k.defQueues, 0)
	h.QueueID = r.i32(k.queueID)
	h.SysFlag = r.i32(k.sysFlag)
	h.BornTimestamp = r.i64(k.born)
	h.Flag = r.i32(k.flag)
	h.Properties = r.optStr(k.props)
	h.ReconsumeTimes = r.optI32(k.reconsume, 0)
	h.UnitMode = r.optBool(k.unit, false)
	h.MaxReconsumeTimes, h.HasMaxReconsumeTimes = r.optI32Has(k.maxReconsume)
	h.Batch = r.optBool(k.batch, false)
	h.BrokerName = r.optStr(k.bname)
	if h.BrokerName == "" && k == &sendKeysV2 {
		h.BrokerName = r.optStr("bname")
	}
	return h, r.Err()
}

// DecodeSendMessageRequestHeader decodes the long-name spelling (codes 10,
// 324). Errors are *FieldError values naming the long key.
func DecodeSendMessageRequestHeader(ext map[string]string) (SendMessageRequestHeader, error) {
	return decodeSend(ext, &sendKeysV1)
}

// DecodeSendMessageRequestHeaderV2 decodes the single-letter spelling
// (codes 310, 320, 325). Errors are *FieldError values naming the letter.
func DecodeSendMessageRequestHeaderV2(ext map[string]string) (SendMessageRequestHeader, error) {
	return decodeSend(ext, &sendKeysV2)
}

// DecodeSendRequestHeader picks the spelling from the request code as the
// Java broker does (SendMessageRequestHeader.parseRequestHeader): V2 for 310,
// 320 and 325, V1 otherwise.
func DecodeSendRequestHeader(code int32, ext map[string]string) (SendMessageRequestHeader, error) {
	return decodeSend(ext, sendKeysFor(code))
}

// sendKeysFor returns the spelling of a SEND request of code: V2 for 310,
// 320 and 325, V1 otherwise.
func sendKeysFor(code int32) *sendKeys {
	switch code {
	case RequestSendMessageV2, RequestSendBatchMessage, RequestSendReplyMessageV2:
		return &sendKeysV2
	}
	return &sendKeysV1
}

// DecodeSendRequest is DecodeSendRequestHeader for a decoded request: the
// fields come from the slots DecodeFrame filled for the single-letter
// codes (no map, typed_ext.go) or else from c.ExtFields. Errors are
// *FieldError values naming the key as spelt on the wire. Any goroutine; c
// is only read.
func DecodeSendRequest(c *Command) (SendMessageRequestHeader, error) {
	r := c.fields()
	return decodeSendFrom(&r, sendKeysFor(c.Code))
}

func (h *SendMessageRequestHeader) encode(c *Command, k *sendKeys) {
	w := extWriter{c}
	w.str(k.group, h.ProducerGroup)
	w.str(k.topic, h.Topic)
	w.str(k.defTopic, h.DefaultTopic)
	w.i32(k.defQueues, h.DefaultTopicQueueNums)
	w.i32(k.queueID, h.QueueID)
	w.i32(k.sysFlag, h.SysFlag)
	w.i64(k.born, h.BornTimestamp)
	w.i32(k.flag, h.Flag)
	w.optStr(k.props, h.Properties)
	w.i32(k.reconsume, h.ReconsumeTimes)
	w.boolean(k.unit, h.UnitMode)
	if h.HasMaxReconsumeTimes {
		w.i32(k.maxReconsume, h.MaxReconsumeTimes)
	}
	w.boolean(k.batch, h.Batch)
	w.optStr(k.bname, h.BrokerName)
}

// Encode sets the long-name ext fields on c (what the Go producer sends with
// code 10). For tests and client-side tools.
func (h SendMessageRequestHeader) Encode(c *Command) { h.encode(c, &sendKeysV1) }

// EncodeV2 sets the single-letter ext fields on c (Java producer, codes 310/320).
func (h SendMessageRequestHeader) EncodeV2(c *Command) { h.encode(c, &sendKeysV2) }

// DefaultMsgRegion is the MSG_REGION a Java broker reports by default.
const DefaultMsgRegion = "DefaultRegion"

// SendMessageResponseHeader is the header of a SEND response
// (remoting/.../protocol/header/SendMessageResponseHeader.java) plus the two
// loose ext fields MSG_REGION and TRACE_ON the Java broker adds in preSend.
// Encode always writes msgId, queueId, queueOffset, MSG_REGION and TRACE_ON:
// the Java producer unboxes queueId/queueOffset and reads the loose fields
// from a non-null map.
type SendMessageResponseHeader struct {
	MsgID         string // offsetMsgId (OffsetMsgID); for batches comma-joined, one per message
	QueueID       int32  // queue actually written
	QueueOffset   int64  // logical offset of the (first) message
	TransactionID string // optional; the Java broker puts UNIQ_KEY here
	BatchUniqID   string // optional
	RecallHandle  string // optional
	MsgRegion     string // MSG_REGION; DefaultMsgRegion when empty
	TraceOn       bool   // TRACE_ON
}

// Encode sets the response ext fields on c.
func (h SendMessageResponseHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("msgId", h.MsgID)
	w.i32("queueId", h.QueueID)
	w.i64("queueOffset", h.QueueOffset)
	w.optStr("transactionId", h.TransactionID)
	w.optStr("batchUniqId", h.BatchUniqID)
	w.optStr("recallHandle", h.RecallHandle)
	region := h.MsgRegion
	if region == "" {
		region = DefaultMsgRegion
	}
	w.str(PropertyMsgRegion, region)
	w.boolean(PropertyTraceSwitch, h.TraceOn)
}

// EncodeJSON is Encode without the map: it writes the same fields, already
// JSON-encoded in the order the JSON encoder sorts ExtFields' keys (byte
// order: MSG_REGION, TRACE_ON, batchUniqId, msgId, queueId, queueOffset,
// recallHandle, transactionId), into c, so the frame is the same bytes
// Encode would give. c must have no ExtFields: once SetExt adds one, the
// encoder writes ExtFields alone. Any goroutine that owns c.
func (h SendMessageResponseHeader) EncodeJSON(c *Command) {
	region := h.MsgRegion
	if region == "" {
		region = DefaultMsgRegion
	}
	b := make([]byte, 0, 128+len(h.MsgID)+len(h.TransactionID)+len(h.RecallHandle)+len(h.BatchUniqID))
	b = append(b, `"`+PropertyMsgRegion+`":`...)
	b = appendJSONString(b, region)
	b = append(b, `,"`+PropertyTraceSwitch+`":"`...)
	b = strconv.AppendBool(b, h.TraceOn)
	b = append(b, '"')
	if h.BatchUniqID != "" {
		b = append(b, `,"batchUniqId":`...)
		b = appendJSONString(b, h.BatchUniqID)
	}
	b = append(b, `,"msgId":`...)
	b = appendJSONString(b, h.MsgID)
	b = append(b, `,"queueId":"`...)
	b = strconv.AppendInt(b, int64(h.QueueID), 10)
	b = append(b, `","queueOffset":"`...)
	b = strconv.AppendInt(b, h.QueueOffset, 10)
	b = append(b, '"')
	if h.RecallHandle != "" {
		b = append(b, `,"recallHandle":`...)
		b = appendJSONString(b, h.RecallHandle)
	}
	if h.TransactionID != "" {
		b = append(b, `,"transactionId":`...)
		b = appendJSONString(b, h.TransactionID)
	}
	c.rawExt = b
}

// DecodeSendMessageResponseHeader reads a SEND response header; msgId,
// queueId and queueOffset are required. TraceOn follows the Java client:
// anything but "false" (including absent) is on.
func DecodeSendMessageResponseHeader(ext map[string]string) (SendMessageResponseHeader, error) {
	r := extReader{ext: ext}
	h := SendMessageResponseHeader{
		MsgID:         r.str("msgId"),
		QueueID:       r.i32("queueId"),
		QueueOffset:   r.i64("queueOffset"),
		TransactionID: r.optStr("transactionId"),
		BatchUniqID:   r.optStr("batchUniqId"),
		RecallHandle:  r.optStr("recallHandle"),
		MsgRegion:     r.optStr(PropertyMsgRegion),
		TraceOn:       r.optStr(PropertyTraceSwitch) != "false",
	}
	return h, r.Err()
}
