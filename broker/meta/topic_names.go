package meta

import (
	"fmt"
	"strings"

	"github.com/popshim/popshim/codec"
)

// ValidateTopicName checks a client-supplied topic name as
// TopicValidator.validateTopic does (codec.ValidateTopic; errors wrap
// codec.ErrBadName); %RETRY% names may hold the broker-made '+' of V2 pop
// retry topics. Pure, any goroutine.
func ValidateTopicName(topic string) error {
	if codec.IsRetryTopic(topic) {
		return codec.ValidateTopic(strings.ReplaceAll(topic, codec.PopRetrySeparatorV2, "_"))
	}
	return codec.ValidateTopic(topic)
}

// TopicNameRemark returns "" when ValidateTopicName accepts topic, else
// the remark a Java broker answers a SEND or topic admin request with
// under INVALID_PARAMETER (29): TopicValidator.validateTopic's texts,
// checked in its order (blank, illegal characters, too long: 255 for
// %RETRY% and %DLQ% names, else 127). Any goroutine.
func TopicNameRemark(topic string) string {
	if ValidateTopicName(topic) == nil {
		return ""
	}
	name := topic
	if codec.IsRetryTopic(topic) {
		name = strings.ReplaceAll(topic, codec.PopRetrySeparatorV2, "_")
	}
	switch {
	case strings.TrimSpace(topic) == "":
		return "The specified topic is blank."
	case codec.InvalidNameChar(name) >= 0:
		return "The specified topic: " + topic + ", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
	case codec.IsRetryTopic(topic) || codec.IsDLQTopic(topic):
		return fmt.Sprintf("The specified topic is DLQ or Retry topic: %s, and it's longer than topic max length: %d", topic, codec.MaxRetryTopicLength)
	default:
		return fmt.Sprintf("The specified topic: %s, is longer than topic max length: %d", topic, codec.MaxTopicLength)
	}
}
