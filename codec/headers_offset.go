package codec

import "strings"

// QueueHeader is the {topic, queueId} header shared by GET_MIN_OFFSET (31,
// GetMinOffsetRequestHeader.java) and GET_EARLIEST_MSG_STORETIME (32,
// GetEarliestMsgStoretimeRequestHeader.java). Both fields are required.
type QueueHeader struct {
	Topic      string
	QueueID    int32
	BrokerName string // bname, optional
}

// DecodeQueueHeader decodes {topic, queueId}; errors are *FieldError.
func DecodeQueueHeader(ext map[string]string) (QueueHeader, error) {
	r := extReader{ext: ext}
	h := QueueHeader{Topic: r.str("topic"), QueueID: r.i32("queueId"), BrokerName: r.optStr("bname")}
	return h, r.Err()
}

// Encode sets the ext fields on c.
func (h QueueHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.optStr("bname", h.BrokerName)
}

// GetMaxOffsetRequestHeader is the header of GET_MAX_OFFSET (30)
// (GetMaxOffsetRequestHeader.java): topic and queueId required; committed
// is optional and defaults to true.
type GetMaxOffsetRequestHeader struct {
	Topic     string
	QueueID   int32
	Committed bool
}

// DecodeGetMaxOffsetRequestHeader decodes the request; errors are *FieldError.
func DecodeGetMaxOffsetRequestHeader(ext map[string]string) (GetMaxOffsetRequestHeader, error) {
	r := extReader{ext: ext}
	h := GetMaxOffsetRequestHeader{Topic: r.str("topic"), QueueID: r.i32("queueId"), Committed: r.optBool("committed", true)}
	return h, r.Err()
}

// Encode sets the ext fields on c.
func (h GetMaxOffsetRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.boolean("committed", h.Committed)
}

// Boundary types of SEARCH_OFFSET_BY_TIMESTAMP (common/.../BoundaryType.java).
const (
	BoundaryLower = "LOWER"
	BoundaryUpper = "UPPER"
)

// SearchOffsetRequestHeader is the header of SEARCH_OFFSET_BY_TIMESTAMP (29)
// (SearchOffsetRequestHeader.java): topic, queueId and timestamp required;
// BoundaryType is BoundaryLower or BoundaryUpper (case-insensitive on the
// wire, anything else or absent reads as BoundaryLower, as in Java).
type SearchOffsetRequestHeader struct {
	Topic        string
	QueueID      int32
	Timestamp    int64 // milliseconds since epoch
	BoundaryType string
}

// DecodeSearchOffsetRequestHeader decodes the request; errors are *FieldError.
func DecodeSearchOffsetRequestHeader(ext map[string]string) (SearchOffsetRequestHeader, error) {
	r := extReader{ext: ext}
	h := SearchOffsetRequestHeader{Topic: r.str("topic"), QueueID: r.i32("queueId"), Timestamp: r.i64("timestamp"), BoundaryType: BoundaryLower}
	if strings.EqualFold(r.optStr("boundaryType"), BoundaryUpper) {
		h.BoundaryType = BoundaryUpper
	}
	return h, r.Err()
}

// Encode sets the ext fields on c.
func (h SearchOffsetRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.i64("timestamp", h.Timestamp)
	w.optStr("boundaryType", h.BoundaryType)
}

// QueryConsumerOffsetRequestHeader is the header of QUERY_CONSUMER_OFFSET
// (14) (QueryConsumerOffsetRequestHeader.java): consumerGroup, topic and
// queueId required; SetZeroIfNotFound defaults to true when absent (the Java
// broker treats null as true).
type QueryConsumerOffsetRequestHeader struct {
	ConsumerGroup     string
	Topic             string
	QueueID           int32
	SetZeroIfNotFound bool
}

// DecodeQueryConsumerOffsetRequestHeader decodes the request; errors are *FieldError.
func DecodeQueryConsumerOffsetRequestHeader(ext map[string]string) (QueryConsumerOffsetRequestHeader, error) {
	r := extReader{ext: ext}
	h := QueryConsumerOffsetRequestHeader{
		ConsumerGroup:     r.str("consumerGroup"),
		Topic:             r.str("topic"),
		QueueID:           r.i32("queueId"),
		SetZeroIfNotFound: r.optBool("setZeroIfNotFound", true),
	}
	return h, r.Err()
}

// Encode sets the ext fields on c.
func (h QueryConsumerOffsetRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("consumerGroup", h.ConsumerGroup)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.boolean("setZeroIfNotFound", h.SetZeroIfNotFound)
}

// UpdateConsumerOffsetRequestHeader is the header of UPDATE_CONSUMER_OFFSET
// (15) (UpdateConsumerOffsetRequestHeader.java); all four fields required.
// The response is SUCCESS with no header fields.
type UpdateConsumerOffsetRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	CommitOffset  int64
}

// DecodeUpdateConsumerOffsetRequestHeader decodes the request; errors are *FieldError.
func DecodeUpdateConsumerOffsetRequestHeader(ext map[string]string) (UpdateConsumerOffsetRequestHeader, error) {
	r := extReader{ext: ext}
	h := UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		Topic:         r.str("topic"),
		QueueID:       r.i32("queueId"),
		CommitOffset:  r.i64("commitOffset"),
	}
	return h, r.Err()
}

// Encode sets the ext fields on c.
func (h UpdateConsumerOffsetRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("consumerGroup", h.ConsumerGroup)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	w.i64("commitOffset", h.CommitOffset)
}

// OffsetResponseHeader is the {offset} response header shared by
// QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET and
// SEARCH_OFFSET_BY_TIMESTAMP (QueryConsumerOffsetResponseHeader.java,
// GetMaxOffsetResponseHeader.java, GetMinOffsetResponseHeader.java,
// SearchOffsetResponseHeader.java).
type OffsetResponseHeader struct {
	Offset int64
}

// Encode sets offset on c.
func (h OffsetResponseHeader) Encode(c *Command) { extWriter{c}.i64("offset", h.Offset) }

// DecodeOffsetResponseHeader reads {offset}; required.
func DecodeOffsetResponseHeader(ext map[string]string) (OffsetResponseHeader, error) {
	r := extReader{ext: ext}
	h := OffsetResponseHeader{Offset: r.i64("offset")}
	return h, r.Err()
}

// EarliestMsgStoretimeResponseHeader is the response of
// GET_EARLIEST_MSG_STORETIME (GetEarliestMsgStoretimeResponseHeader.java).
type EarliestMsgStoretimeResponseHeader struct {
	Timestamp int64 // milliseconds since epoch
}

// Encode sets timestamp on c.
func (h EarliestMsgStoretimeResponseHeader) Encode(c *Command) {
	extWriter{c}.i64("timestamp", h.Timestamp)
}

// ResetOffsetRequestHeader is the header of INVOKE_BROKER_TO_RESET_OFFSET
// (222) (ResetOffsetRequestHeader.java): group, topic, timestamp and
// isForce required; queueId optional (-1, every queue, when absent);
// offset optional (absent or -1 means none: search by timestamp).
// mqadmin resetOffsetByTime sends offset -1 and no queueId.
type ResetOffsetRequestHeader struct {
	Group   string
	Topic   string
	QueueID int32 // < 0: every read queue of the topic
	// Offset is the target queue offset when HasOffset, used only with a
	// QueueID ≥ 0, as in Java.
	Offset    int64
	HasOffset bool
	// Timestamp is a store time in ms since epoch; negative means "the
	// queue's max offset".
	Timestamp int64
	IsForce   bool
}

// DecodeResetOffsetRequestHeader decodes the request; errors are *FieldError.
func DecodeResetOffsetRequestHeader(ext map[string]string) (ResetOffsetRequestHeader, error) {
	r := extReader{ext: ext}
	h := ResetOffsetRequestHeader{Group: r.str("group"), Topic: r.str("topic"), QueueID: r.optI32("queueId", -1),
		Timestamp: r.i64("timestamp")}
	if _, ok := r.lookup("isForce", true); ok {
		h.IsForce = r.optBool("isForce", false)
	}
	if off, ok := r.int64Field("offset", false, -1); ok && off != -1 {
		h.Offset, h.HasOffset = off, true
	}
	return h, r.Err()
}

// Encode sets the ext fields on c; offset is written as -1 when absent, as
// the Java admin client does.
func (h ResetOffsetRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("group", h.Group)
	w.str("topic", h.Topic)
	w.i32("queueId", h.QueueID)
	if h.HasOffset {
		w.i64("offset", h.Offset)
	} else {
		w.i64("offset", -1)
	}
	w.i64("timestamp", h.Timestamp)
	w.boolean("isForce", h.IsForce)
}
