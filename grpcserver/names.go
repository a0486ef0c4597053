package grpcserver

import (
	"errors"
	"strings"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
)

// Errors of validateTopic and validateGroup for reserved names, worded as
// rocketmq-proxy 5.5.0's GrpcValidator words them
// (proxy/.../grpc/v2/common/GrpcValidator.java).
var (
	errSystemTopic = errors.New("cannot access system topic")
	errSystemGroup = errors.New("cannot use system consumer group")
)

// sysConsumerGroupPrefix starts the consumer groups RocketMQ reserves for
// itself (MixAll.CID_RMQ_SYS_PREFIX, checked by MixAll.isSysConsumerGroup).
const sysConsumerGroupPrefix = "CID_RMQ_SYS_"

// validateTopic is the proxy's validateTopic: a legal topic name
// (codec.ValidateTopic) that is no system topic (TopicValidator.isSystemTopic:
// TBW102, SCHEDULE_TOPIC_XXXX, the RMQ_SYS_* and TRANS_CHECK_MAX_TIME_TOPIC
// family, every rmq_sys_ name; meta.IsReservedSystemTopic). Callers answer
// an error ILLEGAL_TOPIC with its text. Pure; any goroutine.
func validateTopic(topic string) error {
	if err := codec.ValidateTopic(topic); err != nil {
		return err
	}
	if meta.IsReservedSystemTopic(topic) {
		return errSystemTopic
	}
	return nil
}

// validateGroup is the proxy's validateConsumerGroup: a legal group name
// (codec.ValidateGroup) not starting with CID_RMQ_SYS_. Callers answer an
// error ILLEGAL_CONSUMER_GROUP with its text. Pure; any goroutine.
func validateGroup(group string) error {
	if err := codec.ValidateGroup(group); err != nil {
		return err
	}
	if strings.HasPrefix(group, sysConsumerGroupPrefix) {
		return errSystemGroup
	}
	return nil
}
