package broker

// AckEach: the ACKs of one gRPC AckMessage (one entry per receipt handle),
// each with its own answer, as Ack gives it, but with the checkpoint
// deletes of all the entries in one writer op: one queue slot, one
// completion pass and one hand-off per request instead of one per entry.
//
// Behaviour, per request, as Ack: validation (CheckReceipt) on the
// caller's goroutine, in order, its refusal answered at once; an orderly
// receipt through Ack's orderly path on its own; every other delete in the
// shared op, answered when it is durable. The shared op succeeds or fails
// as a whole: a SYSTEM_BUSY lane or a failed write is the answer of each of
// its requests (separate ops in one group commit fail together too).

import (
	"github.com/popshim/popshim/popstore"
)

// maxAckEachDeletes bounds the deletes of one AckEach op; a longer request
// list is split into several ops.
const maxAckEachDeletes = 1024

// AckEach acks every request of rs as Ack does; done(i, err) is called
// exactly once for each request i with what Ack would pass its done (a
// refusal, possibly before AckEach returns, nil once durable, or the
// submit or write error). Any goroutine; never blocks; rs is not kept.
func (b *Broker) AckEach(rs []AckRequest, done func(i int, err error)) {
	keys := make([]popstore.CheckpointKey, 0, min(len(rs), maxAckEachDeletes))
	at := make([]int, 0, cap(keys))
	for i := range rs {
		r := &rs[i]
		rc, rerr := b.Svc.receiptOf(r)
		if rerr != nil {
			done(i, rerr)
			continue
		}
		if rc.EI.IsOrder() {
			b.submitOrderAcks([]orderAck{{r.ConsumerGroup, r.Topic, r.QueueID, r.Offset, rc.EI.PopTime}}, nil,
				func(err error) { done(i, err) })
			continue
		}
		keys, at = append(keys, rc.Key), append(at, i)
		if len(keys) == maxAckEachDeletes {
			b.submitDeletes(keys, at, done)
			keys, at = make([]popstore.CheckpointKey, 0, maxAckEachDeletes), make([]int, 0, maxAckEachDeletes)
		}
	}
	if len(keys) > 0 {
		b.submitDeletes(keys, at, done)
	}
}

// submitDeletes deletes keys in one writer op (submitCheckpointDeletes);
// done(at[j], err) reports key j. keys and at belong to the op from here
// on.
func (b *Broker) submitDeletes(keys []popstore.CheckpointKey, at []int, done func(i int, err error)) {
	b.submitCheckpointDeletes("ack", keys, func(err error) {
		for _, i := range at {
			done(i, err)
		}
	})
}
