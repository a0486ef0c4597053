package popstore

import (
	"encoding/json"
	"fmt"
)

// PutMetaValue stores a small free-form value under name in the meta column
// family (for example the revive cursor). Read it back with Store.MetaValue.
func (t *Txn) PutMetaValue(name string, value []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	t.b.put(cfiMeta, []byte(metaUserPrefix+name), value)
	return nil
}

// PutTopic creates or replaces a topic's metadata. Errors: ErrBadName,
// ErrTxnDone.
func (t *Txn) PutTopic(m TopicMeta) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := checkName("topic", m.TopicName); err != nil {
		return err
	}
	v, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("popstore: encode topic: %w", err)
	}
	t.lockSerial()
	t.b.put(cfiMeta, []byte(metaTopicPrefix+m.TopicName), v)
	m = m.clone()
	t.setTopic(m.TopicName, &m)
	return nil
}

func (t *Txn) setTopic(name string, m *TopicMeta) {
	if t.topics == nil {
		t.topics = make(map[string]*TopicMeta)
	}
	prev, had := t.topics[name]
	t.journal(func() {
		if had {
			t.topics[name] = prev
		} else {
			delete(t.topics, name)
		}
	})
	t.topics[name] = m
}

// Topic is Store.Topic seen through this Txn's writes.
func (t *Txn) Topic(name string) (TopicMeta, bool) {
	if m, ok := t.topics[name]; ok {
		if m == nil {
			return TopicMeta{}, false
		}
		return m.clone(), true
	}
	return t.s.Topic(name)
}
