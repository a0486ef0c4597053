package broker

import (
	"strings"

	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// probeMaxBytes bounds the record bytes one tag probe reads per queue.
const probeMaxBytes = 1 << 20

// PendingTags implements longpoll.TagSource for the long-poll registry: the TAGS
// property (withProps: and the whole properties string, for SQL92 waiters)
// of up to limit messages of (topic, queueID) that group has not consumed
// yet, in queue order. A queue's range starts at the group's
// committed consume offset or from, whichever is larger (without a
// committed offset: from, else the last limit messages), and ends before
// to (< 0: the queue's maxOffset). queueID anyQueue covers every read queue
// of topic (from and to ignored), limit shared among them. truncated
// reports that pending messages were left uninspected. Read errors end the
// scan of that queue (the wake-up then works with what was read). Runs on
// a reader goroutine.
func (s *Service) PendingTags(group, topic string, queueID int32, from, to int64, limit int, withProps bool) ([]longpoll.PendingTag, bool) {
	queues := []int32{queueID}
	if queueID == longpoll.AnyQueue {
		meta, ok := s.Topics.Get(topic)
		if !ok || meta.ReadQueueNums <= 0 {
			return nil, false
		}
		queues = queues[:0]
		for q := range meta.ReadQueueNums {
			queues = append(queues, q)
		}
		from, to = -1, -1
		limit = max(limit/len(queues), 8)
	}
	st := s.Store
	var out []longpoll.PendingTag
	truncated := false
	for _, q := range queues {
		end := to
		if end < 0 {
			end = st.MaxOffset(topic, q)
		}
		start := from
		if off, ok := st.ConsumerOffset(group, topic, q); ok {
			start = max(start, off)
		} else if start < 0 {
			start = end - int64(limit)
		}
		start = max(start, st.MinOffset(topic, q))
		n := 0
		for start < end && n < limit {
			recs, next, err := st.ReadMessages(topic, q, start, int(min(int64(limit-n), end-start)), probeMaxBytes)
			if err != nil {
				s.Log.Warn().Err(err).Str("topic", topic).Int32("queueId", q).Msg("long poll: tag probe read failed")
				break
			}
			if len(recs) == 0 {
				break
			}
			for _, rec := range recs {
				m, _, err := codec.UnsafeDecodeMessage(rec)
				if err != nil || m.QueueOffset >= end {
					continue
				}
				tag, has := codec.PropertyValue(m.Properties, codec.PropertyTags)
				pt := longpoll.PendingTag{QueueID: q, Tag: strings.Clone(tag), HasTag: has}
				if withProps {
					pt.Props, pt.HasProps = strings.Clone(m.Properties), true
				}
				out = append(out, pt)
				n++
			}
			start = next
		}
		if start < end {
			truncated = true
		}
	}
	return out, truncated
}

// SubmitProbe implements longpoll.TagSource: job runs on the reader pool (the queue
// of fresh requests); false when the pool is full or not running.
func (s *Service) SubmitProbe(job func()) bool { return s.SubmitRead(job) }
