package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// requestModesMetaKey names the meta value that holds the whole table, as
// RocketMQ keeps it in one file (config/messageRequestMode.json).
const requestModesMetaKey = "messageRequestMode"

// RequestMode is one SET_MESSAGE_REQUEST_MODE setting for (topic,
// consumerGroup): Mode is codec.MessageRequestModePop or ...Pull; PopShareQueueNum ≤ 0 means
// every consumer pops every queue (queueId -1).
type RequestMode struct {
	Topic            string `json:"topic"`
	ConsumerGroup    string `json:"consumerGroup"`
	Mode             string `json:"mode"`
	PopShareQueueNum int32  `json:"popShareQueueNum"`
}

// requestModes is the (topic, consumerGroup) → RequestMode table of a
// TopicTable (broker/.../loadbalance/MessageRequestModeManager.java).
type requestModes struct {
	mu     sync.RWMutex
	table  map[string]map[string]RequestMode // topic → group → mode; durable entries, served
	staged map[string]map[string]RequestMode // table plus writes not yet durable
}

func (r *requestModes) load(store *popstore.Store) error {
	r.table = make(map[string]map[string]RequestMode)
	r.staged = make(map[string]map[string]RequestMode)
	v, err := store.MetaValue(requestModesMetaKey)
	if errors.Is(err, popstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("handler: read message request modes: %w", err)
	}
	if err := json.Unmarshal(v, &r.table); err != nil {
		return fmt.Errorf("handler: decode message request modes: %w", err)
	}
	for tp, groups := range r.table {
		r.staged[tp] = make(map[string]RequestMode, len(groups))
		for g, m := range groups {
			r.staged[tp][g] = m
		}
	}
	return nil
}

func (r *requestModes) get(topic, group string) (RequestMode, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	m, ok := r.table[topic][group]
	return m, ok
}

// stage puts m into the staged table (what the next persisted value holds)
// and returns its JSON and the entry m replaced.
func (r *requestModes) stage(m RequestMode) (v []byte, prev RequestMode, had bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.staged[m.Topic] == nil {
		r.staged[m.Topic] = make(map[string]RequestMode)
	}
	prev, had = r.staged[m.Topic][m.ConsumerGroup]
	r.staged[m.Topic][m.ConsumerGroup] = m
	v, err = json.Marshal(r.staged)
	if err != nil {
		r.unstageLocked(m, prev, had)
	}
	return v, prev, had, err
}

// unstageLocked undoes stage. REQUIRES: r.mu held.
func (r *requestModes) unstageLocked(m, prev RequestMode, had bool) {
	if had {
		r.staged[m.Topic][m.ConsumerGroup] = prev
	} else {
		delete(r.staged[m.Topic], m.ConsumerGroup)
	}
}

// stageDrop removes topic from the staged table and returns the table's
// new encoding and the removed entries; v is nil (nothing to persist) when
// topic had no request mode. Writer goroutine (a Delete's Apply).
func (r *requestModes) stageDrop(topic string) (v []byte, removed map[string]RequestMode, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	removed = r.staged[topic]
	if len(removed) == 0 {
		return nil, nil, nil
	}
	delete(r.staged, topic)
	if v, err = json.Marshal(r.staged); err != nil {
		r.staged[topic] = removed
		return nil, nil, err
	}
	return v, removed, nil
}

// unstageDrop undoes stageDrop unless topic got a new staged entry since.
func (r *requestModes) unstageDrop(topic string, removed map[string]RequestMode) {
	if len(removed) == 0 {
		return
	}
	r.mu.Lock()
	if _, again := r.staged[topic]; !again {
		r.staged[topic] = removed
	}
	r.mu.Unlock()
}

// dropServed removes topic from the served table once its deletion is
// durable. The staged table was already changed by stageDrop, and may hold
// a mode set for a re-created topic in a later batch, so it is left alone.
func (r *requestModes) dropServed(topic string) {
	r.mu.Lock()
	delete(r.table, topic)
	r.mu.Unlock()
}

// RequestMode returns the stored request mode of (topic, consumerGroup), or
// false when SET_MESSAGE_REQUEST_MODE never set one. Event-loop safe.
func (t *TopicTable) RequestMode(topic, group string) (RequestMode, bool) {
	return t.modes.get(topic, group)
}

// SetRequestMode stores m durably (the whole table is rewritten as one meta
// value through the writer's background lane), then updates the table and
// calls done on the writer's completer goroutine. It returns the Submit error at once
// (done not called): batch.ErrBusy, batch.ErrClosed, batch.ErrFailed, or a
// JSON encoding error.
func (t *TopicTable) SetRequestMode(m RequestMode, done func(error)) error {
	// The value is built inside Apply from the staged table, so updates that
	// share one batch each persist a table holding every earlier one.
	var prev RequestMode
	var had bool
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 256,
		Apply: func(tx *popstore.Txn) error {
			v, p, h, err := t.modes.stage(m)
			if err != nil {
				return err
			}
			prev, had = p, h
			if err := tx.PutMetaValue(requestModesMetaKey, v); err != nil {
				t.modes.mu.Lock()
				t.modes.unstageLocked(m, prev, had)
				t.modes.mu.Unlock()
				return err
			}
			return nil
		},
		Done: func(err error) {
			t.modes.mu.Lock()
			if err == nil {
				if t.modes.table[m.Topic] == nil {
					t.modes.table[m.Topic] = make(map[string]RequestMode)
				}
				t.modes.table[m.Topic][m.ConsumerGroup] = m
			} else if cur, ok := t.modes.staged[m.Topic][m.ConsumerGroup]; ok && cur == m {
				t.modes.unstageLocked(m, prev, had)
			}
			t.modes.mu.Unlock()
			done(err)
		},
	}
	return t.w.Submit(op)
}
