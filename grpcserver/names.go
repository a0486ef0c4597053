package grpcserver

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

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
		return nameError("topic", topic, err)
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
		return nameError("group", group, err)
	}
	if strings.HasPrefix(group, sysConsumerGroupPrefix) {
		return errSystemGroup
	}
	return nil
}

// nameError rewords err, codec's refusal of a topic or group name, as the
// proxy's checks word it (client/.../Validators.java checkTopic and
// checkGroup, whose messages GrpcValidator passes on): blank (empty or
// only whitespace), longer than the limit (counted in characters), else
// illegal characters. The result unwraps to err, so errors.Is(…,
// codec.ErrBadName) still holds.
func nameError(kind, name string, err error) error {
	limit := codec.MaxGroupLength
	if kind == "topic" {
		limit = codec.MaxTopicLength
		if codec.IsRetryTopic(name) || codec.IsDLQTopic(name) {
			limit = codec.MaxRetryTopicLength
		}
	}
	// Java capitalizes the topic's messages and not the group's.
	subject := "the specified " + kind
	if kind == "topic" {
		subject = "The specified topic"
	}
	var msg string
	switch {
	case strings.TrimSpace(name) == "":
		msg = subject + " is blank"
	case utf8.RuneCountInString(name) > limit:
		msg = fmt.Sprintf("%s is longer than %s max length %d.", subject, kind, limit)
	default:
		msg = fmt.Sprintf("%s[%s] contains illegal characters, allowing only ^[%%|a-zA-Z0-9_-]+$", subject, name)
	}
	return reworded{msg, err}
}

// reworded is an error shown as msg that unwraps to err.
type reworded struct {
	msg string
	err error
}

func (r reworded) Error() string { return r.msg }
func (r reworded) Unwrap() error { return r.err }
