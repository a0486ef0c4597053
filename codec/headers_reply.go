package codec

// ReplyMessageRequestHeader is the header of PUSH_REPLY_MESSAGE_TO_CLIENT
// (326), the broker's push of a request-reply reply to the requester:
// remoting/.../protocol/header/ReplyMessageRequestHeader.java (long names).
// The Java client decodes it with every field but properties,
// reconsumeTimes and unitMode required (@CFNotNull), so Encode writes them
// all. bornHost and storeHost are "ip:port" strings.
type ReplyMessageRequestHeader struct {
	ProducerGroup         string // producerGroup
	Topic                 string // topic
	DefaultTopic          string // defaultTopic
	DefaultTopicQueueNums int32  // defaultTopicQueueNums
	QueueID               int32  // queueId
	SysFlag               int32  // sysFlag (compression bits of the body)
	BornTimestamp         int64  // bornTimestamp, Unix ms
	Flag                  int32  // flag
	Properties            string // properties (properties string layout)
	ReconsumeTimes        int32  // reconsumeTimes
	UnitMode              bool   // unitMode
	BornHost              string // bornHost, "ip:port" of the replier
	StoreHost             string // storeHost, "ip:port" of the broker
	StoreTimestamp        int64  // storeTimestamp, Unix ms
}

// Encode sets the ext fields on c.
func (h ReplyMessageRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("producerGroup", h.ProducerGroup)
	w.str("topic", h.Topic)
	w.str("defaultTopic", h.DefaultTopic)
	w.i32("defaultTopicQueueNums", h.DefaultTopicQueueNums)
	w.i32("queueId", h.QueueID)
	w.i32("sysFlag", h.SysFlag)
	w.i64("bornTimestamp", h.BornTimestamp)
	w.i32("flag", h.Flag)
	w.optStr("properties", h.Properties)
	w.i32("reconsumeTimes", h.ReconsumeTimes)
	w.boolean("unitMode", h.UnitMode)
	w.str("bornHost", h.BornHost)
	w.str("storeHost", h.StoreHost)
	w.i64("storeTimestamp", h.StoreTimestamp)
}

// DecodeReplyMessageRequestHeader reads the header as the Java client does
// (for tests and client-side tools). Errors: *FieldError for a missing or
// unparsable required field.
func DecodeReplyMessageRequestHeader(ext map[string]string) (ReplyMessageRequestHeader, error) {
	r := extReader{ext: ext}
	h := ReplyMessageRequestHeader{
		ProducerGroup:         r.str("producerGroup"),
		Topic:                 r.str("topic"),
		DefaultTopic:          r.str("defaultTopic"),
		DefaultTopicQueueNums: r.i32("defaultTopicQueueNums"),
		QueueID:               r.i32("queueId"),
		SysFlag:               r.i32("sysFlag"),
		BornTimestamp:         r.i64("bornTimestamp"),
		Flag:                  r.i32("flag"),
		Properties:            r.optStr("properties"),
		ReconsumeTimes:        r.optI32("reconsumeTimes", 0),
		UnitMode:              r.optBool("unitMode", false),
		BornHost:              r.str("bornHost"),
		StoreHost:             r.str("storeHost"),
		StoreTimestamp:        r.i64("storeTimestamp"),
	}
	return h, r.Err()
}

// RecallMessageRequestHeader is the header of RECALL_MESSAGE (370):
// remoting/.../protocol/header/RecallMessageRequestHeader.java (a
// TopicRequestHeader: brokerName travels as bname). topic and recallHandle
// are required.
type RecallMessageRequestHeader struct {
	ProducerGroup string // producerGroup, optional
	Topic         string // topic
	RecallHandle  string // recallHandle: the SEND reply's recallHandle
	BrokerName    string // bname, optional
}

// DecodeRecallMessageRequestHeader reads a RECALL_MESSAGE header. Errors:
// *FieldError naming topic or recallHandle when missing.
func DecodeRecallMessageRequestHeader(ext map[string]string) (RecallMessageRequestHeader, error) {
	r := extReader{ext: ext}
	h := RecallMessageRequestHeader{
		ProducerGroup: r.optStr("producerGroup"),
		Topic:         r.str("topic"),
		RecallHandle:  r.str("recallHandle"),
		BrokerName:    r.optStr("bname"),
	}
	return h, r.Err()
}

// Encode sets the ext fields on c (tests, client-side tools).
func (h RecallMessageRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.optStr("producerGroup", h.ProducerGroup)
	w.str("topic", h.Topic)
	w.str("recallHandle", h.RecallHandle)
	w.optStr("bname", h.BrokerName)
}
