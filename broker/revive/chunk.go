package revive

import (
	"errors"
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// ChunkItems bounds the checkpoints revived by one writer op. Chunks
// are planned and written one after another, so a batch holds at most one of them and a
// large revive pass delays an ACK by one small op, not by the whole pass.
// Each item is atomic on its own (retry copy + checkpoint delete), so a pass
// that fails after some chunks leaves only unrevived checkpoints behind.
const ChunkItems = 64

// reviveChunkBytes also closes a chunk once its retry copies reach this
// many bytes (the writer's default --batch-max-bytes), so a pass holds at
// most about this much planned data, plus one message, at a time.
const reviveChunkBytes = 8 << 20

// commitChunk writes one chunk as one background-lane op and waits for it.
func (r *Reviver) commitChunk(items []reviveItem) error {
	d := r.d
	r.ops.Add(1)
	now := d.Now()
	bytes := 0
	for i := range items {
		bytes += 64 + len(items[i].plan.record)
	}
	done := make(chan error, 1)
	op := &batch.Op{
		Lane:  batch.LaneBackground,
		Bytes: bytes,
		Apply: func(tx *popstore.Txn) error {
			for i := range items {
				if err := r.apply(tx, &items[i], now); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) { done <- err },
	}
	for {
		err := d.Writer.Submit(op)
		if err == nil {
			break
		}
		if !errors.Is(err, batch.ErrBusy) {
			return err
		}
		select { // background lane full: wait a little, revive is not urgent
		case <-r.run.Quit():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
	return <-done
}

// apply is one item's share of the pass op. Runs on the writer goroutine.
func (r *Reviver) apply(tx *popstore.Txn, it *reviveItem, now int64) error {
	cur, ok, err := tx.GetCheckpoint(it.ck.Key)
	if err != nil {
		return err
	}
	if !ok {
		it.skipped = true
		return nil
	}
	if it.kind == reviveRetry {
		if _, _, err := tx.AppendMessage(it.plan.topic, 0, it.plan.record); err == nil {
			return tx.DeleteCheckpoint(cur.Key)
		}
		it.kind = reviveBackoff
	}
	if it.kind == reviveBackoff && cur.AttemptTimes < r.set.MaxAttempts {
		next := cur
		step := reviveBackoffSeconds[min(int(cur.AttemptTimes), len(reviveBackoffSeconds)-1)]
		next.PopTimeMillis = now
		next.InvisibleTimeMillis = cur.InvisibleTimeMillis + step*1000
		next.AttemptTimes = cur.AttemptTimes + 1
		next.Key.VisibleAtMillis = now + next.InvisibleTimeMillis
		it.rescheduledAt = next.Key.VisibleAtMillis
		return tx.ReplaceCheckpoint(cur.Key, next)
	}
	it.dropped = true
	return tx.DeleteCheckpoint(cur.Key)
}

// account logs and counts the outcome of a written pass.
func (r *Reviver) account(items []reviveItem) {
	d := r.d
	for i := range items {
		it := &items[i]
		k := it.ck.Key
		switch {
		case it.skipped:
		case it.dropped:
			d.Metrics.Dropped.Inc()
			if it.kind == reviveBackoff {
				d.Log.Error().Str("group", k.Group).Str("topic", k.Topic).Int32("queueId", k.QueueId).
					Int64("queueOffset", k.QueueOffset).Int32("attempts", it.ck.AttemptTimes).
					Msg("revive: attempts exhausted, checkpoint dropped, message may be lost")
			} else {
				d.Log.Info().Str("group", k.Group).Str("topic", k.Topic).Int64("queueOffset", k.QueueOffset).
					Msg("revive: message no longer stored, checkpoint dropped")
			}
		case it.kind == reviveBackoff:
			d.Metrics.Retry.WithLabelValues(k.Group, k.Topic, "failed").Inc()
			d.Log.Warn().Str("group", k.Group).Str("topic", k.Topic).Int64("queueOffset", k.QueueOffset).
				Int32("attempts", it.ck.AttemptTimes+1).Msg("revive: failed, rescheduled with backoff")
		case it.plan.dlq:
			d.Metrics.SendToDLQ.WithLabelValues(it.plan.origin, k.Group, isSystemTopic(it.plan.origin)).Inc()
		default:
			d.Metrics.Retry.WithLabelValues(k.Group, k.Topic, "put_ok").Inc()
		}
	}
}
