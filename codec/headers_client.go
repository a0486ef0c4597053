package codec

// HEART_BEAT (34) has no request header fields (HeartbeatRequestHeader.java
// carries only the RPC base fields); its body is HeartbeatData, see
// DecodeHeartbeatData.

// HeartbeatResponseHeader holds the loose ext fields a Java broker adds to
// a HEART_BEAT SUCCESS (broker/.../processor/ClientManageProcessor.java).
// Leaving IsSupportHeartBeatV2 false makes clients keep sending full
// heartbeats, which is the safe choice.
type HeartbeatResponseHeader struct {
	IsSupportHeartBeatV2 bool // IS_SUPPORT_HEART_BEAT_V2
	IsSubChange          bool // IS_SUB_CHANGE
}

// Encode sets both ext fields on c.
func (h HeartbeatResponseHeader) Encode(c *Command) {
	w := extWriter{c}
	w.boolean("IS_SUPPORT_HEART_BEAT_V2", h.IsSupportHeartBeatV2)
	w.boolean("IS_SUB_CHANGE", h.IsSubChange)
}

// UnregisterClientRequestHeader is the header of UNREGISTER_CLIENT (35)
// (UnregisterClientRequestHeader.java). clientID is required; the response
// is SUCCESS with no header fields.
type UnregisterClientRequestHeader struct {
	ClientID      string
	ProducerGroup string // optional
	ConsumerGroup string // optional
}

// DecodeUnregisterClientRequestHeader decodes the request; errors are *FieldError.
func DecodeUnregisterClientRequestHeader(ext map[string]string) (UnregisterClientRequestHeader, error) {
	r := extReader{ext: ext}
	h := UnregisterClientRequestHeader{ClientID: r.str("clientID"), ProducerGroup: r.optStr("producerGroup"), ConsumerGroup: r.optStr("consumerGroup")}
	return h, r.Err()
}

// Encode sets the request ext fields on c.
func (h UnregisterClientRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("clientID", h.ClientID)
	w.optStr("producerGroup", h.ProducerGroup)
	w.optStr("consumerGroup", h.ConsumerGroup)
}

// ConsumerGroupHeader is the one-field header {consumerGroup} shared by
// GET_CONSUMER_LIST_BY_GROUP (38, GetConsumerListByGroupRequestHeader.java)
// and the broker→client NOTIFY_CONSUMER_IDS_CHANGED (40,
// NotifyConsumerIdsChangedRequestHeader.java). consumerGroup is required.
type ConsumerGroupHeader struct {
	ConsumerGroup string
}

// DecodeConsumerGroupHeader decodes the header; errors are *FieldError.
func DecodeConsumerGroupHeader(ext map[string]string) (ConsumerGroupHeader, error) {
	r := extReader{ext: ext}
	h := ConsumerGroupHeader{ConsumerGroup: r.str("consumerGroup")}
	return h, r.Err()
}

// Encode sets consumerGroup on c.
func (h ConsumerGroupHeader) Encode(c *Command) { c.SetExt("consumerGroup", h.ConsumerGroup) }

// GetConsumerListByGroupRequestHeader is the header of GET_CONSUMER_LIST_BY_GROUP (38).
type GetConsumerListByGroupRequestHeader = ConsumerGroupHeader

// DecodeGetConsumerListByGroupRequestHeader decodes GET_CONSUMER_LIST_BY_GROUP (38).
func DecodeGetConsumerListByGroupRequestHeader(ext map[string]string) (GetConsumerListByGroupRequestHeader, error) {
	return DecodeConsumerGroupHeader(ext)
}

// NotifyConsumerIDsChangedRequestHeader is the header of the oneway
// broker→client NOTIFY_CONSUMER_IDS_CHANGED (40).
type NotifyConsumerIDsChangedRequestHeader = ConsumerGroupHeader
