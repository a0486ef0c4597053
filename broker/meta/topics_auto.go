package meta

import (
	"maps"
	"strings"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Auto-creation of topics: by a SEND (remoting), a v5 SendMessage, the
// retry and DLQ paths; and the v5 route look-up's question whether a
// missing topic would be created.

// TopicMessageTypeKey is the topic attribute naming the message type a
// topic accepts: NORMAL (also when absent), FIFO, DELAY, TRANSACTION or
// MIXED (common/.../attribute/TopicAttributes.java,
// TOPIC_MESSAGE_TYPE_ATTRIBUTE; TopicConfig.getTopicMessageType).
const TopicMessageTypeKey = "message.type"

// WouldAutoCreate reports whether GetOrCreate would create topic now were
// it missing and nothing else: --auto-create-topic is on and the name is
// valid, not reserved (rmq_sys_, TBW102), not one SEND may never write
// (IsSendForbidden) and neither a retry nor a DLQ topic. The v5 endpoint
// answers such a topic's route look-up with the route it would get
// (broker.Broker.ProvisionalRoute) and creates it on its first
// SendMessage. Any goroutine.
func (t *TopicTable) WouldAutoCreate(topic string) bool {
	return t.ordinaryName(topic) && plainName(topic) && !IsSendForbidden(topic) && ValidateTopicName(topic) == nil
}

// ordinaryName reports whether --auto-create-topic is on and topic is not
// reserved (the rmq_sys_ prefix, TBW102).
func (t *TopicTable) ordinaryName(topic string) bool {
	return t.autoCreate.Load() && !strings.HasPrefix(topic, codec.SystemTopicPrefix) && topic != codec.AutoCreateTopicKey
}

// plainName reports whether topic is neither a retry nor a DLQ topic.
func plainName(topic string) bool { return !codec.IsRetryTopic(topic) && !codec.IsDLQTopic(topic) }

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

// GetOrCreate returns topic's configuration, creating it when it is missing
// and may be auto-created: %RETRY% topics always (1 queue, perm 6, as the
// heartbeat and POP paths of a Java broker make them); %DLQ% topics with
// --auto-create-topic (1 queue); other valid names with --auto-create-topic
// (TBW102's defaults: --default-topic-queue-nums queues, perm 6). Names with
// the reserved rmq_sys_ prefix are never auto-created.
//
// A created topic is visible at once; its persistence is queued on the
// writer's background lane and, if it fails, the topic is removed again
// (the next request re-creates it). Safe on the event loop.
// Errors: ErrTopicNotExist, codec.ErrBadName (wrapped), batch.ErrBusy,
// batch.ErrClosed, batch.ErrFailed.
func (t *TopicTable) GetOrCreate(topic string) (popstore.TopicMeta, error) {
	return t.getOrCreate(topic, 0, false, nil)
}

// GetOrCreateForSend is GetOrCreate for a SEND whose producer asked for
// clientQueues queues (the header's defaultTopicQueueNums). With
// --auto-create-topic every name but the reserved ones is created as a
// Java broker's AbstractSendMessageProcessor.msgCheck creates it first
// (TopicConfigManager.createTopicInSendMessageMethod), %RETRY% and %DLQ%
// names included: min(clientQueues, --default-topic-queue-nums) queues
// (clientQueues ≤ 0: --default-topic-queue-nums), perm 6. The producer,
// which publishes to min(its defaultTopicQueueNums, TBW102's queues) from
// TBW102's route, then finds the same count in the new topic's route.
// Without it a %RETRY% name still gets 1 queue (msgCheck's fallback,
// createTopicInSendMessageBackMethod) and other names ErrTopicNotExist.
// Errors as GetOrCreate.
func (t *TopicTable) GetOrCreateForSend(topic string, clientQueues int32) (popstore.TopicMeta, error) {
	return t.getOrCreate(topic, clientQueues, true, nil)
}

// getOrCreate is GetOrCreate (forSend false), GetOrCreateForSend and
// GetOrCreateTyped (attrs: an ordinary topic's attributes when created).
func (t *TopicTable) getOrCreate(topic string, clientQueues int32, forSend bool, attrs map[string]string) (popstore.TopicMeta, error) {
	if m, ok := t.Get(topic); ok {
		return m, nil
	}
	ordinary, plain := t.ordinaryName(topic), plainName(topic)
	var queues int32
	switch {
	case ordinary && (forSend || plain):
		queues = t.set.DefaultQueueNums
		if clientQueues > 0 {
			queues = min(queues, clientQueues)
		}
	case codec.IsRetryTopic(topic):
		queues = RetryQueueNums
	case codec.IsDLQTopic(topic) && t.autoCreate.Load():
		queues = dlqQueueNums
	default:
		return popstore.TopicMeta{}, ErrTopicNotExist
	}
	if err := ValidateTopicName(topic); err != nil {
		return popstore.TopicMeta{}, err
	}
	if !ordinary || !plain {
		attrs = nil
	}
	return t.ensure(popstore.TopicMeta{TopicName: topic, ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: permReadWrite, TopicFilterType: codec.TopicFilterSingleTag, Attributes: maps.Clone(attrs)})
}
