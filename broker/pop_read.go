package broker

import (
	"slices"

	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/broker/orderly"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// readQueue pops from one queue. REQUIRES: called by run's goroutine.
func (j *PopJob) readQueue(o *popOutcome, s popSource) {
	svc, st, group := j.s, j.s.Store, j.h.ConsumerGroup
	remaining := int(j.h.MaxMsgNums) - o.found
	if j.h.Order {
		remaining = min(remaining, popstore.MaxOrderOffsets)
	}
	k := queueLockKey{group, s.topic, s.queueID}
	if remaining <= 0 || len(o.body) >= j.maxBytes {
		j.skipQueue(o, s)
		return
	}
	if !svc.locks.tryLock(k) {
		if j.h.Order {
			// The holder releases it within one write: an orderly POP waits
			// for it (orderSpin) rather than skip a queue it may be the
			// re-entrant owner of (docs/SCENARIOS.md ORD-01, concurrent retries).
			o.contended = true
			return
		}
		j.skipQueue(o, s)
		return
	}
	// Recorded at once, so a panic from here on still releases it (Run).
	o.held = append(o.held, k)
	var lease orderLease
	if j.h.Order {
		// Read under the lock: the previous POP of the queue released it
		// only after its lease was durable and published.
		lease.prev, lease.had = st.OrderState(group, s.topic, s.queueID)
		if lease.had && orderly.Blocked(lease.prev, j.h.AttemptID, o.popTime) {
			o.held = o.held[:len(o.held)-1]
			j.unlockQueue(k)
			o.blocked++
			o.seen = append(o.seen, longpoll.QueueMax{Topic: s.topic, QueueID: s.queueID, MaxOffset: st.MaxOffset(s.topic, s.queueID)})
			return
		}
		o.open = append(o.open, s.queueID)
		o.lease = &lease
	}
	// The offset is read under the lock: the previous holder released it
	// only after its offset advance was durable and published.
	stored, hasStored := st.ConsumerOffset(group, s.topic, s.queueID)
	minOff, maxOff := st.MinOffset(s.topic, s.queueID), st.MaxOffset(s.topic, s.queueID)
	o.seen = append(o.seen, longpoll.QueueMax{Topic: s.topic, QueueID: s.queueID, MaxOffset: maxOff})
	start := stored
	if !hasStored {
		start = j.initOffset(s, minOff, maxOff)
	}
	start = min(max(start, minOff), maxOff)
	next := start
	ckStart := int64(-1) // first offset returned from this queue: receipt field 0
	var offsets []int64
	scanned := 0
	// A filtered POP consumes what its filter rejects (the offset moves
	// past it, as in RocketMQ). It stops instead at a message another
	// outstanding POP request of its group would take (wantsOf), and leaves
	// it to that POP (handoff).
	var peers *longpoll.PeerWants
	if j.filter != nil {
		peers = svc.Polls.WantsOf(group, s.topic, s.queueID)
	}
	handedOff, full := false, false
	for !handedOff && !full && remaining > 0 && next < maxOff && scanned < svc.Settings.MaxScanPerQueue && len(o.body) < j.maxBytes {
		want := remaining
		if j.filter != nil {
			want = min(256, svc.Settings.MaxScanPerQueue-scanned)
		}
		recs, nxt, err := st.ReadMessagesInto(o.rb, s.topic, s.queueID, next, want, j.maxBytes-len(o.body))
		if err != nil {
			if o.readErr == nil {
				o.readErr = err
			}
			svc.Log.Error().Err(err).Str("topic", s.topic).Int32("queueId", s.queueID).Msg("pop: read failed")
			break
		}
		if len(recs) == 0 {
			next = max(next, nxt)
			break
		}
		if j.filter == nil {
			// Every record read goes into the reply (but one that would
			// pass maxPopBytes): size it once. A filtered read may keep
			// few of them; its entries grow the body as they come.
			o.body = growBody(o.body, recs, len(svc.Settings.BrokerName))
		}
		if !j.h.Order {
			o.cks = slices.Grow(o.cks, len(recs))
		}
		for _, rec := range recs {
			scanned++
			m, _, err := codec.UnsafeDecodeMessage(rec)
			if err != nil {
				next++
				svc.Log.Error().Err(err).Str("topic", s.topic).Int32("queueId", s.queueID).Int64("queueOffset", next-1).
					Msg("pop: skipping undecodable stored record")
				continue
			}
			next = m.QueueOffset + 1
			if !j.filter.MatchProps(m.Properties) {
				if peers.WantsProps(m.Properties) {
					next = m.QueueOffset
					o.handoff = append(o.handoff, longpoll.Key{Topic: s.topic, QueueID: s.queueID})
					handedOff = true
					break
				}
				continue
			}
			if len(o.body) > 0 && len(o.body)+len(rec) > j.maxBytes {
				// It would take the reply past maxPopBytes (and a client's
				// frame limit): left for the next POP.
				next, full = m.QueueOffset, true
				break
			}
			if ckStart < 0 {
				ckStart = m.QueueOffset
			}
			if err := j.appendRecord(o, rec, &m, s, ckStart); err != nil {
				svc.Log.Error().Err(err).Str("topic", s.topic).Int64("queueOffset", m.QueueOffset).Msg("pop: cannot re-encode record")
				continue
			}
			offsets = append(offsets, m.QueueOffset)
			remaining--
			if remaining == 0 {
				break
			}
		}
	}
	if !handedOff && scanned >= svc.Settings.MaxScanPerQueue && next < maxOff {
		o.filterBound = true
	}
	if j.h.Order && len(offsets) > 0 {
		// The consume offset stays at the first returned message until the
		// ACKs move it (ConsumerOrderInfoManager.commitAndNext); a filtered
		// prefix before it is consumed.
		next = ckStart
		lease.topic, lease.queueID = s.topic, s.queueID
		lease.next = orderly.NewLease(lease.prev, lease.had, j.h.AttemptID, o.popTime, j.h.InvisibleTime, offsets)
		o.leases = append(o.leases, lease)
		o.orderInfo = orderly.AppendCountInfo(o.orderInfo, lease.next, s.queueID)
	}
	if len(offsets) > 0 || next != stored || !hasStored {
		o.commits = append(o.commits, offsetCommit{s.topic, s.queueID, next, stored, hasStored})
	} else {
		// Nothing to commit: release now (k is the last lock taken).
		o.held = o.held[:len(o.held)-1]
		j.unlockQueue(k)
	}
	if maxOff > next && !(j.h.Order && len(offsets) > 0) {
		// A queue this orderly POP now holds is blocked for the others: its
		// backlog is not "rest" (docs/SCENARIOS.md POLL-03).
		o.rest += maxOff - next
	}
	if len(offsets) > 0 {
		o.startInfo = codec.AppendStartOffsetInfo(o.startInfo, s.flag, s.queueID, ckStart)
		o.msgInfo = codec.AppendMsgOffsetInfo(o.msgInfo, s.flag, s.queueID, offsets)
		o.found += len(offsets)
		if s.flag != codec.RetryFlagNormal {
			o.retryFound = true
			o.foundRetry += len(offsets)
		}
	}
}

// skipQueue records a queue this run does not read (full, or its lock
// taken): its max offset for the long-poll registry and its backlog as rest
// (not for an orderly POP: a queue held by another POP is blocked for it).
func (j *PopJob) skipQueue(o *popOutcome, s popSource) {
	st := j.s.Store
	maxOff := st.MaxOffset(s.topic, s.queueID)
	o.seen = append(o.seen, longpoll.QueueMax{Topic: s.topic, QueueID: s.queueID, MaxOffset: maxOff})
	if j.h.Order {
		return
	}
	if stored, ok := st.ConsumerOffset(j.h.ConsumerGroup, s.topic, s.queueID); ok && maxOff > stored {
		o.rest += maxOff - stored
	}
}

// initOffset is where a group without a committed offset starts
// (PopMessageProcessor.getInitOffset): retry topics and initMode MIN at the
// queue's min offset; initMode MAX at 0 when the queue is hot (hotQueue:
// never trimmed, offset 0 within Settings.InMemoryBytes of the commit
// log's end — RocketMQ's in-memory shortcut), else at the last message
// (max − 1). The choice is
// persisted by the POP's offset commit, so it is made once per group.
func (j *PopJob) initOffset(s popSource, minOff, maxOff int64) int64 {
	if s.flag != codec.RetryFlagNormal || codec.IsRetryTopic(s.topic) || j.h.InitMode == codec.ConsumeInitModeMin {
		return minOff
	}
	if hotQueue(j.s.Store, s.topic, s.queueID, j.s.Settings.InMemoryBytes) {
		return 0
	}
	return max(maxOff-1, minOff, 0)
}

// popEntryExtra bounds what a POP reply entry adds to its stored record,
// besides the broker name: the POP_CK pair around the other fields of the
// receipt handle, and a separator.
const popEntryExtra = 96

// growBody returns body with room for recs as POP reply entries (growBody
// sizes the reply once per read instead of doubling it record by record).
func growBody(body []byte, recs [][]byte, brokerNameLen int) []byte {
	n := 0
	for _, r := range recs {
		n += len(r) + popEntryExtra + brokerNameLen
	}
	return slices.Grow(body, n)
}

// appendRecord adds one message (the stored record rec, decoded as m) to
// the response body with its POP_CK property, and its checkpoint. Retry
// messages are returned under the requested (original) topic, as the Java
// broker does by default. ckStart is receipt field 0 (and the
// startOffsetInfo value): the first offset this POP returns from the queue,
// so BATCH_ACK bits stay small and never point below a returned message.
// The entry itself is appendEntry's.
func (j *PopJob) appendRecord(o *popOutcome, rec []byte, m *codec.MessageExt, s popSource, ckStart int64) error {
	svc := j.s
	ei := codec.ExtraInfo{
		CkQueueOffset: ckStart, PopTime: o.popTime, InvisibleTime: j.h.InvisibleTime,
		RetryFlag: s.flag, BrokerName: svc.Settings.BrokerName, QueueID: s.queueID, QueueOffset: m.QueueOffset,
	}
	if j.h.Order {
		ei.ReviveQid = codec.PopOrderReviveQueue
	}
	reconsume := m.ReconsumeTimes
	if l := o.lease; j.h.Order && l != nil {
		// The count is also the record's reconsumeTimes: a client that
		// finds POP_CK in the message (as popshim sends it) keeps the
		// record's value rather than reading orderCountInfo
		// (MQClientAPIImpl.processPopResponse).
		if n := orderly.CountFor(l.prev, l.had, j.h.AttemptID, m.QueueOffset); n > 0 {
			reconsume = n
		}
	}
	if err := j.appendEntry(o, rec, m, s, &ei, reconsume); err != nil {
		return err
	}
	if j.h.Order {
		return nil // the lease (orderLease), not a checkpoint, holds it
	}
	o.cks = append(o.cks, popstore.Checkpoint{
		Key: popstore.CheckpointKey{
			VisibleAtMillis: o.popTime + j.h.InvisibleTime, Group: j.h.ConsumerGroup,
			Topic: s.topic, QueueId: s.queueID, QueueOffset: m.QueueOffset,
		},
		PopTimeMillis: o.popTime, InvisibleTimeMillis: j.h.InvisibleTime,
		RetryFlag: uint8(s.flag), PhysicalOffset: m.PhysicalOffset,
	})
	return nil
}

// appendEntry adds the reply entry of one message: for PopRequest.Records
// the stored record as is, with its receipt ei and reconsumeTimes kept
// beside it (typedRef); else a remoting entry, the record with its POP_CK
// property: one of the requested topic copied with the property appended
// (codec.AppendPopRecord), a retry record, or one the fast path declines,
// decoded and encoded again under the requested topic.
func (j *PopJob) appendEntry(o *popOutcome, rec []byte, m *codec.MessageExt, s popSource, ei *codec.ExtraInfo, reconsume int32) error {
	retry := s.flag != codec.RetryFlagNormal
	if j.h.Records {
		start := len(o.body)
		o.body = append(o.body, rec...)
		o.typed = append(o.typed, typedRef{start: start, end: len(o.body), ei: *ei, reconsume: reconsume, retry: retry})
		return nil
	}
	if !retry {
		var fast bool
		if o.body, fast = codec.AppendPopRecord(o.body, rec, m, reconsume, ei); fast {
			return nil
		}
	}
	props, err := codec.SetProperty(m.Properties, codec.PropertyPopCK, ei.String())
	if err != nil {
		return err
	}
	out := *m
	out.Properties = props
	out.ReconsumeTimes = reconsume
	if retry {
		out.Topic = j.h.Topic
	}
	body, err := codec.AppendMessage(o.body, &out)
	if err != nil {
		return err
	}
	o.body = body
	return nil
}

// typedRef is one message of a PopRequest.Records reply while the job
// runs: its stored record at body[start:end], its receipt, reconsumeTimes
// and whether it came from a retry topic (shown under the requested one).
type typedRef struct {
	start, end int
	ei         codec.ExtraInfo
	reconsume  int32
	retry      bool
}

// poppedRecords decodes the typed entries of o once its body is final
// (PopResult.Records). A record that no longer decodes (it decoded when
// read) is left out: a core fault, logged.
func (j *PopJob) poppedRecords(o *popOutcome) []PoppedRecord {
	out := make([]PoppedRecord, 0, len(o.typed))
	for _, t := range o.typed {
		m, _, err := codec.UnsafeDecodeMessage(o.body[t.start:t.end])
		if err != nil {
			j.s.Log.Error().Err(err).Str("topic", j.h.Topic).Msg("pop: a copied record does not decode")
			continue
		}
		m.ReconsumeTimes = t.reconsume
		if t.retry {
			m.Topic = j.h.Topic
		}
		out = append(out, PoppedRecord{Msg: m, ExtraInfo: t.ei})
	}
	return out
}
