package handler

// GET_CONSUME_STATS (208).
//
// Header: consumerGroup (required); topic, topicList (';'-separated)
// (optional) (GetConsumeStatsRequestHeader.java).
//
// Behaviour (AdminBrokerProcessor.getConsumeStats): the topics reported are
// topicList when given; otherwise topic, or every topic the group has a
// committed offset on; without topicList, topics the group's live members
// do not subscribe are dropped when the group has live subscriptions.
// Unknown topics are skipped. For each read queue of each topic:
//   - brokerOffset: the queue's max offset (one past the last message);
//   - pullOffset: the group's committed offset, 0 when none. POP commits
//     the offset to the end of what it returned in the same write as its
//     checkpoints, so for POP consumers this is the POP offset;
//   - consumerOffset: pullOffset less the queue's POP checkpoints in flight
//     (popped, not acked; popstore.Store.InflightOf), at least 0, as a
//     5.5.1 broker answers for a POP group whose messages are not all
//     acked: mqadmin consumerProgress prints brokerOffset − consumerOffset
//     as Diff and pullOffset − consumerOffset as Inflight, statsAll sums
//     Diff as Accumulation, and a message at or past consumerOffset tracks
//     as NOT_CONSUME_YET. Until 2026-12-07 consumerOffset was the POP
//     offset: in-flight messages showed as consumed. With acks out of
//     order the lowest unacked offset may be lower than this figure;
//     Diff still counts every message not acked;
//   - lastTimestamp: store time in ms of the message at consumerOffset−1,
//     0 when none.
//
// consumeTps is 0: popshim keeps no per-group rate (the message counts are
// in rocketmq_messages_out_total on /metrics). Offsets come from memory;
// the store times need store reads, so the answer is built on the reader
// pool (the in-flight counts too). The body is a ConsumeStats with MessageQueue-object keys
// (codec.AppendConsumeStats).
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2) when the reader queue is
// full; SYSTEM_ERROR (1) for a store error or a missing header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// consumeStatsTopics chooses the topics GET_CONSUME_STATS reports. Event
// loop; memory only.
func (b *Broker) consumeStatsTopics(h codec.GetConsumeStatsRequestHeader) []string {
	if len(h.TopicList) > 0 {
		return h.TopicList
	}
	topics := []string{h.Topic}
	if h.Topic == "" {
		topics = b.Store.TopicsOfGroup(h.ConsumerGroup)
	}
	info, online := b.Clients.Consumer(h.ConsumerGroup)
	if !online || len(info.Subscriptions) == 0 {
		return topics
	}
	kept := topics[:0:0]
	for _, t := range topics {
		if _, ok := info.Subscriptions[t]; ok {
			kept = append(kept, t)
		}
	}
	return kept
}

// consumeStatsRows builds one OffsetWrapper per queue of each known topic
// (queue counts from readQueues or the write queue count): brokerOffset
// the max offset, pullOffset the committed offset (0 when none),
// consumerOffset that less the queue's checkpoints in flight. Unknown
// topics are skipped. Memory only, but the in-flight counts share a lock
// with the writer's publish: reader pool, not the event loop.
func (b *Broker) consumeStatsRows(group string, topics []string, readQueues bool) []codec.OffsetWrapper {
	var rows []codec.OffsetWrapper
	for _, topic := range topics {
		tc, ok := b.Topics.Get(topic)
		if !ok {
			continue
		}
		n := tc.WriteQueueNums
		if readQueues {
			n = tc.ReadQueueNums
		}
		for q := int32(0); q < n; q++ {
			off, _ := b.Store.ConsumerOffset(group, topic, q)
			off = max(off, 0)
			rows = append(rows, codec.OffsetWrapper{
				Queue:        codec.MessageQueue{Topic: topic, BrokerName: b.Cfg.BrokerName, QueueID: q},
				BrokerOffset: max(b.Store.MaxOffset(topic, q), 0), PullOffset: off,
				ConsumerOffset: max(off-b.Store.InflightOf(group, topic, q), 0),
			})
		}
	}
	return rows
}

// fillLastTimestamps sets each row's lastTimestamp: the store time of the
// message at consumerOffset−1. Blocks on RocksDB: reader pool only.
func (b *Broker) fillLastTimestamps(rows []codec.OffsetWrapper) error {
	for i := range rows {
		r := &rows[i]
		if r.ConsumerOffset <= 0 {
			continue
		}
		ts, err := b.Store.StoreTimeAt(r.Queue.Topic, r.Queue.QueueID, r.ConsumerOffset-1)
		if err != nil {
			return err
		}
		r.LastTimestamp = ts
	}
	return nil
}

func (b *Broker) handleGetConsumeStats(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeGetConsumeStatsRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	topics := b.consumeStatsTopics(h)
	job := func() {
		rows := b.consumeStatsRows(h.ConsumerGroup, topics, true)
		if err := b.fillLastTimestamps(rows); err != nil {
			reply.Code(c, req, codec.SystemError, "consume stats: "+err.Error())
			return
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.AppendConsumeStats(nil, rows, 0)
		reply.Respond(c, req, resp)
	}
	if !b.submitLargeRead(c, req, job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}
