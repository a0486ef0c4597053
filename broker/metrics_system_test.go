package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker"
)

// The is_system label follows TopicValidator.isSystemTopic, as
// BrokerMetricsManager.isSystem: message trace lands in
// RMQ_SYS_TRACE_TOPIC, which used to be labelled false.
func TestIsSystemTopicLabel(t *testing.T) {
	for topic, want := range map[string]string{
		"RMQ_SYS_TRACE_TOPIC": "true", "TBW102": "true", "SCHEDULE_TOPIC_XXXX": "true",
		"RMQ_SYS_TRANS_HALF_TOPIC": "true", "rmq_sys_revive_log": "true",
		"TopicTest": "false", "%RETRY%G": "false", "rmq_user_topic": "false",
	} {
		if got := broker.IsSystemTopic(topic); got != want {
			t.Errorf("IsSystemTopic(%q) = %s, want %s", topic, got, want)
		}
	}
}
