package meta

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// EnsureSystemTopic makes a topic the broker writes to itself exist with
// queues queues (read and write), perm 6, whatever --auto-create-topic
// says, as a Java broker's createTopicOfTranCheckMaxTime (for
// TRANS_CHECK_MAX_TIME_TOPIC, 1 queue) does. An existing topic is returned
// unchanged. The topic is visible at once; its persistence is queued on
// the writer's background lane (as GetOrCreate). Safe on any goroutine.
// Errors: as GetOrCreate (a name the topic rules reject, batch.ErrBusy,
// batch.ErrClosed, batch.ErrFailed).
func (t *TopicTable) EnsureSystemTopic(name string, queues int32) (popstore.TopicMeta, error) {
	if m, ok := t.Get(name); ok {
		return m, nil
	}
	if err := ValidateTopicName(name); err != nil {
		return popstore.TopicMeta{}, err
	}
	return t.ensure(popstore.TopicMeta{TopicName: name, ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: permReadWrite, TopicFilterType: codec.TopicFilterSingleTag})
}
