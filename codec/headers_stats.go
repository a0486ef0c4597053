package codec

import "strings"

// GetConsumeStatsRequestHeader is the header of GET_CONSUME_STATS (208)
// (GetConsumeStatsRequestHeader.java): consumerGroup is required; topic and
// topicList (topics joined by ';') are optional. With topicList the broker
// reports exactly those topics; otherwise topic, or every topic the group
// has offsets for.
type GetConsumeStatsRequestHeader struct {
	ConsumerGroup string
	Topic         string
	TopicList     []string
}

// DecodeGetConsumeStatsRequestHeader decodes the header; errors are
// *FieldError.
func DecodeGetConsumeStatsRequestHeader(ext map[string]string) (GetConsumeStatsRequestHeader, error) {
	r := extReader{ext: ext}
	h := GetConsumeStatsRequestHeader{ConsumerGroup: r.str("consumerGroup"), Topic: r.optStr("topic")}
	for _, t := range strings.Split(r.optStr("topicList"), ";") {
		if t = strings.TrimSpace(t); t != "" {
			h.TopicList = append(h.TopicList, t)
		}
	}
	return h, r.Err()
}

// Encode sets consumerGroup, and topic and topicList when not empty, on c.
func (h GetConsumeStatsRequestHeader) Encode(c *Command) {
	c.SetExt("consumerGroup", h.ConsumerGroup)
	if h.Topic != "" {
		c.SetExt("topic", h.Topic)
	}
	if len(h.TopicList) > 0 {
		c.SetExt("topicList", strings.Join(h.TopicList, ";"))
	}
}

// ProducerGroupHeader is the header of GET_PRODUCER_CONNECTION_LIST (204)
// (GetProducerConnectionListRequestHeader.java); producerGroup is required.
type ProducerGroupHeader struct {
	ProducerGroup string
}

// DecodeProducerGroupHeader decodes the header; errors are *FieldError.
func DecodeProducerGroupHeader(ext map[string]string) (ProducerGroupHeader, error) {
	r := extReader{ext: ext}
	h := ProducerGroupHeader{ProducerGroup: r.str("producerGroup")}
	return h, r.Err()
}

// Encode sets producerGroup on c.
func (h ProducerGroupHeader) Encode(c *Command) { c.SetExt("producerGroup", h.ProducerGroup) }
