package handler

// GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305).
//
// Header: none.
//
// Behaviour: answers body/TopicList.java {"topicList":[...]} (sorted) with
// the system topics of this broker, as AdminBrokerProcessor
// getSystemTopicListFromBroker answers TopicValidator.getSystemTopicSet():
// the fixed names of TopicValidator's SYSTEM_TOPIC_SET (TBW102,
// SCHEDULE_TOPIC_XXXX, BenchmarkTest, RMQ_SYS_TRANS_HALF_TOPIC,
// RMQ_SYS_TRACE_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC,
// TRANS_CHECK_MAX_TIME_TOPIC, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT,
// CHECKPOINT_TOPIC) plus every topic this broker holds that
// meta.TopicTable.IsSystem reports (the cluster-name and broker-name topics
// TopicConfigManager also adds to that set, rmq_sys_ topics). mqadmin
// exportMetadata (DefaultMQAdminExtImpl.getUserTopicConfig) drops these
// from GET_ALL_TOPIC_CONFIG's table.
//
// Response codes: SUCCESS (0).

import (
	"encoding/json"
	"sort"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// javaSystemTopics are TopicValidator's SYSTEM_TOPIC_SET fixed names.
var javaSystemTopics = []string{codec.AutoCreateTopicKey, meta.ScheduleTopic, meta.BenchmarkTopic,
	meta.TransHalfTopic, meta.TraceTopic, meta.TransOpHalfTopic, meta.TransCheckMaxTimeTopic,
	meta.SelfTestTopic, meta.OffsetMovedEventTopic, meta.RocksDBOffsetCheckpoint}

// systemTopicList is the sorted, de-duplicated topic list of 305.
func (b *Broker) systemTopicList() []string {
	seen := make(map[string]struct{}, len(javaSystemTopics)+4)
	for _, t := range javaSystemTopics {
		seen[t] = struct{}{}
	}
	for _, m := range b.Topics.All() {
		if b.Topics.IsSystem(m.TopicName) {
			seen[m.TopicName] = struct{}{}
		}
	}
	names := make([]string, 0, len(seen))
	for t := range seen {
		names = append(names, t)
	}
	sort.Strings(names)
	return names
}

func (b *Broker) handleGetSystemTopicListFromBroker(c remoting.Conn, req *codec.Command) {
	body, err := json.Marshal(topicListBody{TopicList: b.systemTopicList()})
	if err != nil {
		reply.Code(c, req, codec.SystemError, err.Error())
		return
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = body
	reply.Respond(c, req, resp)
}
