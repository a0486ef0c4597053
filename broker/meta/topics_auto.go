package meta

import (
	"strings"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// TopicMessageTypeKey is the topic attribute naming the message type a
// topic accepts: NORMAL (also when absent), FIFO, DELAY, TRANSACTION or
// MIXED (common/.../attribute/TopicAttributes.java,
// TOPIC_MESSAGE_TYPE_ATTRIBUTE; TopicConfig.getTopicMessageType).
const TopicMessageTypeKey = "message.type"

// WouldAutoCreate reports whether GetOrCreate would create topic now were
// it missing and nothing else: --auto-create-topic is on and the name is
// valid, not reserved (rmq_sys_, TBW102) and neither a retry nor a DLQ
// topic. The v5 endpoint answers such a topic's route look-up with the
// route it would get (broker.Broker.ProvisionalRoute) and creates it on
// its first SendMessage. Any goroutine.
func (t *TopicTable) WouldAutoCreate(topic string) bool {
	if !t.autoCreate.Load() || strings.HasPrefix(topic, codec.SystemTopicPrefix) || topic == codec.AutoCreateTopicKey ||
		codec.IsRetryTopic(topic) || codec.IsDLQTopic(topic) {
		return false
	}
	return ValidateTopicName(topic) == nil
}

// GetOrCreateTyped is GetOrCreate for a v5 SendMessage: a topic it
// creates carries TopicMessageTypeKey = typ, the type of the message that
// created it ("FIFO", "DELAY" or "TRANSACTION"; "" and "NORMAL" add no
// attribute, as a remoting SEND creates it), so the route the producer
// reads next accepts what it sends, as a topic an operator made with
// `mqadmin updateTopic -a +message.type=<typ>` would. Retry and DLQ
// topics never get one. An existing topic is returned unchanged. Errors
// and goroutines as GetOrCreate.
func (t *TopicTable) GetOrCreateTyped(topic, typ string) (popstore.TopicMeta, error) {
	var attrs map[string]string
	if typ != "" && typ != "NORMAL" {
		attrs = map[string]string{TopicMessageTypeKey: typ}
	}
	return t.getOrCreate(topic, 0, false, attrs)
}
