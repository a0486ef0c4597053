package codec

// GetMinOffsetRequestHeader is the header of GET_MIN_OFFSET (31).
type GetMinOffsetRequestHeader = QueueHeader

// DecodeGetMinOffsetRequestHeader decodes GET_MIN_OFFSET (31); errors are *FieldError.
func DecodeGetMinOffsetRequestHeader(ext map[string]string) (GetMinOffsetRequestHeader, error) {
	return DecodeQueueHeader(ext)
}

// ConsumerSendMsgBackRequestHeader is the header of CONSUMER_SEND_MSG_BACK
// (36) (ConsumerSendMsgBackRequestHeader.java). Required: offset (the
// commit-log physical offset of the message), group, delayLevel.
type ConsumerSendMsgBackRequestHeader struct {
	Offset               int64 // physical offset (RecordPhysicalOffsetPos field of the record)
	Group                string
	DelayLevel           int32 // 0: broker uses 3 + reconsumeTimes; -1: straight to DLQ
	OriginMsgID          string
	OriginTopic          string
	UnitMode             bool
	MaxReconsumeTimes    int32 // valid when HasMaxReconsumeTimes
	HasMaxReconsumeTimes bool
	BrokerName           string
}

// DecodeConsumerSendMsgBackRequestHeader decodes the request; errors are *FieldError.
func DecodeConsumerSendMsgBackRequestHeader(ext map[string]string) (ConsumerSendMsgBackRequestHeader, error) {
	r := extReader{ext: ext}
	h := ConsumerSendMsgBackRequestHeader{
		Offset:      r.i64("offset"),
		Group:       r.str("group"),
		DelayLevel:  r.i32("delayLevel"),
		OriginMsgID: r.optStr("originMsgId"),
		OriginTopic: r.optStr("originTopic"),
		UnitMode:    r.optBool("unitMode", false),
		BrokerName:  r.optStr("bname"),
	}
	h.MaxReconsumeTimes, h.HasMaxReconsumeTimes = r.optI32Has("maxReconsumeTimes")
	return h, r.Err()
}

// Encode sets the request ext fields on c.
func (h ConsumerSendMsgBackRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.i64("offset", h.Offset)
	w.str("group", h.Group)
	w.i32("delayLevel", h.DelayLevel)
	w.optStr("originMsgId", h.OriginMsgID)
	w.optStr("originTopic", h.OriginTopic)
	w.boolean("unitMode", h.UnitMode)
	if h.HasMaxReconsumeTimes {
		w.i32("maxReconsumeTimes", h.MaxReconsumeTimes)
	}
	w.optStr("bname", h.BrokerName)
}

// Topic permission bits (common/.../constant/PermName.java).
const (
	PermPriority int32 = 0x8
	PermRead     int32 = 0x4
	PermWrite    int32 = 0x2
	PermInherit  int32 = 0x1
)

// Topic filter types of CreateTopicRequestHeader.TopicFilterType.
const (
	TopicFilterSingleTag = "SINGLE_TAG"
	TopicFilterMultiTag  = "MULTI_TAG"
)

// CreateTopicRequestHeader is the header of UPDATE_AND_CREATE_TOPIC (17)
// (CreateTopicRequestHeader.java). Required here: topic, readQueueNums,
// writeQueueNums, perm. Java also marks defaultTopic, topicFilterType and
// order @CFNotNull, but popshim does not need them, so they are read
// leniently (TopicFilterType defaults to SINGLE_TAG, Order to false).
// Attributes is the raw "+key=value,-key" string.
type CreateTopicRequestHeader struct {
	Topic           string
	DefaultTopic    string
	ReadQueueNums   int32
	WriteQueueNums  int32
	Perm            int32 // Perm* bits
	TopicFilterType string
	TopicSysFlag    int32
	Order           bool
	Attributes      string
	Force           bool
}

// DecodeCreateTopicRequestHeader decodes the request; errors are *FieldError.
func DecodeCreateTopicRequestHeader(ext map[string]string) (CreateTopicRequestHeader, error) {
	r := extReader{ext: ext}
	h := CreateTopicRequestHeader{
		Topic:           r.str("topic"),
		DefaultTopic:    r.optStr("defaultTopic"),
		ReadQueueNums:   r.i32("readQueueNums"),
		WriteQueueNums:  r.i32("writeQueueNums"),
		Perm:            r.i32("perm"),
		TopicFilterType: r.optStr("topicFilterType"),
		TopicSysFlag:    r.optI32("topicSysFlag", 0),
		Order:           r.optBool("order", false),
		Attributes:      r.optStr("attributes"),
		Force:           r.optBool("force", false),
	}
	if h.TopicFilterType == "" {
		h.TopicFilterType = TopicFilterSingleTag
	}
	return h, r.Err()
}

// Encode sets the request ext fields on c.
func (h CreateTopicRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("topic", h.Topic)
	w.optStr("defaultTopic", h.DefaultTopic)
	w.i32("readQueueNums", h.ReadQueueNums)
	w.i32("writeQueueNums", h.WriteQueueNums)
	w.i32("perm", h.Perm)
	w.optStr("topicFilterType", h.TopicFilterType)
	w.i32("topicSysFlag", h.TopicSysFlag)
	w.boolean("order", h.Order)
	w.optStr("attributes", h.Attributes)
	w.boolean("force", h.Force)
}

// TopicHeader is the {topic} header of GET_TOPIC_CONFIG (351,
// GetTopicConfigRequestHeader.java), DELETE_TOPIC_IN_BROKER (215,
// DeleteTopicRequestHeader.java) and GET_ROUTEINFO_BY_TOPIC (105,
// namesrv/GetRouteInfoRequestHeader.java, which adds acceptStandardJsonOnly).
// topic is required.
type TopicHeader struct {
	Topic                  string
	AcceptStandardJSONOnly bool // GET_ROUTEINFO_BY_TOPIC only; default false
}

// DecodeTopicHeader decodes {topic}; errors are *FieldError.
func DecodeTopicHeader(ext map[string]string) (TopicHeader, error) {
	r := extReader{ext: ext}
	h := TopicHeader{Topic: r.str("topic"), AcceptStandardJSONOnly: r.optBool("acceptStandardJsonOnly", false)}
	return h, r.Err()
}

// Encode sets topic (and acceptStandardJsonOnly when true) on c.
func (h TopicHeader) Encode(c *Command) {
	c.SetExt("topic", h.Topic)
	if h.AcceptStandardJSONOnly {
		c.SetExt("acceptStandardJsonOnly", "true")
	}
}

// GetRouteInfoRequestHeader is the header of GET_ROUTEINFO_BY_TOPIC (105).
type GetRouteInfoRequestHeader = TopicHeader

// DecodeGetRouteInfoRequestHeader decodes GET_ROUTEINFO_BY_TOPIC (105).
func DecodeGetRouteInfoRequestHeader(ext map[string]string) (GetRouteInfoRequestHeader, error) {
	return DecodeTopicHeader(ext)
}

// RouteUsesStandardJSON reports whether a GET_ROUTEINFO_BY_TOPIC answer to
// a request of the given version must use quoted brokerAddrs keys in the
// Java name server's sense (version ≥ 401 = V4_9_4, or
// acceptStandardJsonOnly). popshim may always quote (see AppendTopicRouteData).
func RouteUsesStandardJSON(version int32, h TopicHeader) bool {
	return version >= 401 || h.AcceptStandardJSONOnly
}

// ViewMessageRequestHeader is the header of VIEW_MESSAGE_BY_ID (33)
// (ViewMessageRequestHeader.java): offset, the commit-log physical offset
// decoded from an offsetMsgId, is required; topic is optional.
type ViewMessageRequestHeader struct {
	Offset int64
	Topic  string
}

// DecodeViewMessageRequestHeader decodes the request; errors are *FieldError.
func DecodeViewMessageRequestHeader(ext map[string]string) (ViewMessageRequestHeader, error) {
	r := extReader{ext: ext}
	h := ViewMessageRequestHeader{Offset: r.i64("offset"), Topic: r.optStr("topic")}
	return h, r.Err()
}

// Encode sets the ext fields on c.
func (h ViewMessageRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.i64("offset", h.Offset)
	w.optStr("topic", h.Topic)
}

// GroupHeader is the {group} header of GET_SUBSCRIPTIONGROUP_CONFIG (352,
// GetSubscriptionGroupConfigRequestHeader.java); group is required.
type GroupHeader struct {
	Group string
}

// DecodeGroupHeader decodes {group}; errors are *FieldError.
func DecodeGroupHeader(ext map[string]string) (GroupHeader, error) {
	r := extReader{ext: ext}
	h := GroupHeader{Group: r.str("group")}
	return h, r.Err()
}
