package meta

import (
	"slices"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Delete removes topic with its messages, queue extents and consumer
// offsets, and also the POP retry topics of every known consumer group for
// it (%RETRY%<group>_<topic> and %RETRY%<group>+<topic>, docs/SCENARIOS.md
// RET-05), in one durable write. knownGroups are consumer groups to consider
// besides those the store and the table already know (the ClientTable's).
// The table changes and done runs (the writer's completer goroutine, must not block) once
// the write is durable; done gets topic and the retry topics that were in
// the table (nil with an error). Errors returned at
// once (done not called): ErrSystemTopic, batch.ErrBusy, batch.ErrClosed,
// batch.ErrFailed. Deleting an unknown topic succeeds (its stray messages
// are removed all the same).
func (t *TopicTable) Delete(topic string, knownGroups []string, done func(deleted []string, err error)) error {
	if t.IsSystem(topic) {
		return ErrSystemTopic
	}
	victims := t.retryTopicsOf(topic, knownGroups)
	victims = append([]string{topic}, victims...)
	// The topic's request modes (SET_MESSAGE_REQUEST_MODE) go with it: the
	// persisted table is rewritten without them in the same batch.
	var modesRemoved map[string]RequestMode
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64 * len(victims),
		Apply: func(tx *popstore.Txn) error {
			for _, v := range victims {
				if err := tx.DeleteTopic(v); err != nil {
					return err
				}
			}
			v, removed, err := t.modes.stageDrop(topic)
			if err != nil || v == nil {
				return err
			}
			if err := tx.PutMetaValue(requestModesMetaKey, v); err != nil {
				t.modes.unstageDrop(topic, removed)
				return err
			}
			modesRemoved = removed
			return nil
		},
		Done: func(err error) {
			if err != nil {
				t.modes.unstageDrop(topic, modesRemoved)
			} else {
				// The store deleted every candidate name (stray messages
				// included); the table, the log and done name the topics
				// that existed, and topic itself.
				deleted := []string{topic}
				t.mu.Lock()
				for _, v := range victims {
					if _, ok := t.topics[v]; ok && v != topic {
						deleted = append(deleted, v)
					}
					delete(t.topics, v)
				}
				t.bumpLocked()
				t.mu.Unlock()
				t.modes.dropServed(topic)
				t.log.Info().Strs("topics", deleted).Msg("topic deleted")
				done(deleted, nil)
				return
			}
			done(nil, err)
		},
	}
	return t.w.Submit(op)
}

// retryTopicsOf lists the POP retry topic names that belong to topic: both
// spellings for every consumer group known to the store, to extra, or by a
// %RETRY%<group> / %DLQ%<group> topic in the table, plus any V2 name in the
// table whose topic part is topic. A V1 name %RETRY%<g>_<topic> is only
// taken for a known group g, since "_" is ambiguous (docs/SCENARIOS.md RET-01).
func (t *TopicTable) retryTopicsOf(topic string, extra []string) []string {
	groups := map[string]bool{}
	for _, g := range extra {
		groups[g] = true
	}
	for _, g := range t.store.Groups() {
		groups[g.GroupName] = true
	}
	out := map[string]bool{}
	t.mu.RLock()
	for name := range t.topics {
		if g, tp, ok := codec.ParsePopRetryTopicV2(name); ok {
			if tp == topic {
				out[name] = true
			}
			groups[g] = true
			continue
		}
		switch {
		case codec.IsRetryTopic(name):
			groups[name[len(codec.RetryGroupTopicPrefix):]] = true
		case codec.IsDLQTopic(name):
			groups[name[len(codec.DLQGroupTopicPrefix):]] = true
		}
	}
	t.mu.RUnlock()
	for g := range groups {
		if g == "" {
			continue
		}
		out[codec.PopRetryTopicV1(g, topic)] = true
		out[codec.PopRetryTopicV2(g, topic)] = true
	}
	delete(out, topic)
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
