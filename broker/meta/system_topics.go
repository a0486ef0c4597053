package meta

import (
	"strings"

	"github.com/popshim/popshim/codec"
)

// Topic names the Java broker reserves (common/.../topic/TopicValidator.java,
// RMQ_SYS_* constants). popshim does not serve schedules, transactions or
// traces through them; it only refuses what a Java broker refuses.
const (
	ScheduleTopic           = "SCHEDULE_TOPIC_XXXX"         // delay-level messages
	BenchmarkTopic          = "BenchmarkTest"               // benchmark tool
	TransHalfTopic          = "RMQ_SYS_TRANS_HALF_TOPIC"    // transactional half messages
	TraceTopic              = "RMQ_SYS_TRACE_TOPIC"         // message traces (clients may send to it)
	TransOpHalfTopic        = "RMQ_SYS_TRANS_OP_HALF_TOPIC" // transaction op records
	TransCheckMaxTimeTopic  = "TRANS_CHECK_MAX_TIME_TOPIC"  // transactions past their check limit
	SelfTestTopic           = "SELF_TEST_TOPIC"             // broker self test
	OffsetMovedEventTopic   = "OFFSET_MOVED_EVENT"          // offset-moved events
	RocksDBOffsetCheckpoint = "CHECKPOINT_TOPIC"            // RocksDB consume-offset checkpoints
)

// isJavaSystemTopic reports TopicValidator.isSystemTopic without the
// rmq_sys_ prefix: the names in its SYSTEM_TOPIC_SET.
func isJavaSystemTopic(topic string) bool {
	switch topic {
	case codec.AutoCreateTopicKey, ScheduleTopic, BenchmarkTopic, TransHalfTopic, TraceTopic,
		TransOpHalfTopic, TransCheckMaxTimeTopic, SelfTestTopic, OffsetMovedEventTopic, RocksDBOffsetCheckpoint:
		return true
	}
	return false
}

// IsReservedSystemTopic reports whether topic is a system topic by name, as
// TopicValidator.isSystemTopic: TBW102, the RMQ_SYS_* / SCHEDULE_TOPIC_XXXX
// family of fixed names above, or any name starting with rmq_sys_. Admin
// requests may not create, change or delete such a topic (TopicTable.IsSystem
// adds popshim's built-in cluster-name and broker-name topics). Pure; any
// goroutine.
func IsReservedSystemTopic(topic string) bool {
	return isJavaSystemTopic(topic) || strings.HasPrefix(topic, codec.SystemTopicPrefix)
}

// IsSendForbidden reports whether producers may not send to topic: the
// names of TopicValidator.isNotAllowedSendTopic (SCHEDULE_TOPIC_XXXX, the
// transaction topics, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT), which a Java
// broker answers NO_PERMISSION (16) "Sending message to topic[...] is
// forbidden." (AbstractSendMessageProcessor.msgCheck); and every
// rmq_sys_ name (internal topics such as the revive log are never written
// by clients). RMQ_SYS_TRACE_TOPIC stays writable: clients send traces
// there; so does TBW102 while it exists (auto-create on), as on a Java
// broker (until 2026-12-06 popshim refused it). Pure; any goroutine.
func IsSendForbidden(topic string) bool {
	switch topic {
	case ScheduleTopic, TransHalfTopic, TransOpHalfTopic, TransCheckMaxTimeTopic, SelfTestTopic,
		OffsetMovedEventTopic:
		return true
	}
	return strings.HasPrefix(topic, codec.SystemTopicPrefix)
}

// ReplyTopic is the topic request-reply replies go to in cluster cluster,
// `<cluster>_REPLY_TOPIC` (MixAll.getReplyTopic): the Java client's
// MessageUtil.createReplyMessage addresses it from the request's CLUSTER
// property, and the topic table creates it at start, one queue, as
// TopicConfigManager does. Pure; any goroutine.
func ReplyTopic(cluster string) string { return cluster + "_REPLY_TOPIC" }
