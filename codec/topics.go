package codec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Topic and group name prefixes and well-known names
// (common/.../MixAll.java, KeyBuilder.java, topic/TopicValidator.java).
const (
	RetryGroupTopicPrefix = "%RETRY%" // pull retry %RETRY%group; pop retry %RETRY%group_topic / %RETRY%group+topic
	DLQGroupTopicPrefix   = "%DLQ%"   // %DLQ%group
	LMQPrefix             = "%LMQ%"   // light message queues
	PopRetrySeparatorV1   = "_"       // pop retry topic V1 separator (ambiguous, docs/SCENARIOS.md RET-01)
	PopRetrySeparatorV2   = "+"       // pop retry topic V2 separator (not legal in names, so unambiguous)
	AutoCreateTopicKey    = "TBW102"  // template topic for auto-creation
	SystemTopicPrefix     = "rmq_sys_"
	ReviveLogTopicPrefix  = "rmq_sys_REVIVE_LOG_" // + cluster name
	MaxTopicLength        = 127                   // characters, ordinary topics
	MaxGroupLength        = 120                   // characters
	MaxRetryTopicLength   = 255                   // characters, retry and DLQ topics
)

// RetryGroupTopic returns the pull/push retry topic %RETRY%<group>.
func RetryGroupTopic(group string) string { return RetryGroupTopicPrefix + group }

// DLQTopic returns the dead-letter topic %DLQ%<group>.
func DLQTopic(group string) string { return DLQGroupTopicPrefix + group }

// PopRetryTopicV1 returns %RETRY%<group>_<topic>.
func PopRetryTopicV1(group, topic string) string {
	return RetryGroupTopicPrefix + group + PopRetrySeparatorV1 + topic
}

// PopRetryTopicV2 returns %RETRY%<group>+<topic>.
func PopRetryTopicV2(group, topic string) string {
	return RetryGroupTopicPrefix + group + PopRetrySeparatorV2 + topic
}

// IsRetryTopic reports whether topic starts with %RETRY%.
func IsRetryTopic(topic string) bool { return strings.HasPrefix(topic, RetryGroupTopicPrefix) }

// IsDLQTopic reports whether topic starts with %DLQ%.
func IsDLQTopic(topic string) bool { return strings.HasPrefix(topic, DLQGroupTopicPrefix) }

// RetryFlagOfTopic returns the receipt retry flag of a topic name as the
// Java client derives it (ExtraInfoUtil.getRetry): a %RETRY% name with a
// '+' is RetryFlagV2, any other %RETRY% name RetryFlagV1, else RetryFlagNormal.
func RetryFlagOfTopic(topic string) RetryFlag {
	if !IsRetryTopic(topic) {
		return RetryFlagNormal
	}
	if strings.Contains(topic, PopRetrySeparatorV2) {
		return RetryFlagV2
	}
	return RetryFlagV1
}

// RealTopic maps (original topic, group, retry flag) to the topic that holds
// the message (ExtraInfoUtil.getRealTopic): topic for RetryFlagNormal,
// PopRetryTopicV1 for RetryFlagV1, PopRetryTopicV2 for RetryFlagV2.
func RealTopic(topic, group string, flag RetryFlag) string {
	switch flag {
	case RetryFlagV1:
		return PopRetryTopicV1(group, topic)
	case RetryFlagV2:
		return PopRetryTopicV2(group, topic)
	}
	return topic
}

// ParsePopRetryTopic recovers the original topic from a pop retry topic of
// a known group. Only the exact prefix %RETRY%<group>+ (V2) or
// %RETRY%<group>_ (V1) is stripped, so group "g1" never matches
// "%RETRY%g10+T" (docs/SCENARIOS.md RET-07). ok is false when retryTopic is not
// a pop retry topic of group or the topic part is empty. A V1 name can
// belong to several (group, topic) pairs (RET-01); the caller's group
// settles it.
func ParsePopRetryTopic(retryTopic, group string) (topic string, flag RetryFlag, ok bool) {
	base := RetryGroupTopicPrefix + group
	if !strings.HasPrefix(retryTopic, base) || len(retryTopic) <= len(base)+1 {
		return "", RetryFlagNormal, false
	}
	rest := retryTopic[len(base):]
	switch rest[0] {
	case '+':
		return rest[1:], RetryFlagV2, true
	case '_':
		return rest[1:], RetryFlagV1, true
	}
	return "", RetryFlagNormal, false
}

// ParsePopRetryTopicV2 splits a V2 pop retry topic %RETRY%<group>+<topic>
// without knowing the group: names cannot contain '+', so the first '+'
// is the separator. ok is false for anything else (including V1 names).
func ParsePopRetryTopicV2(retryTopic string) (group, topic string, ok bool) {
	if !IsRetryTopic(retryTopic) {
		return "", "", false
	}
	rest := retryTopic[len(RetryGroupTopicPrefix):]
	i := strings.IndexByte(rest, '+')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// ReviveLogTopic returns rmq_sys_REVIVE_LOG_<cluster>.
func ReviveLogTopic(cluster string) string { return ReviveLogTopicPrefix + cluster }

// ErrBadName reports that a topic or group name breaks TopicValidator's rules.
var ErrBadName = errors.New("codec: invalid topic or group name")

// InvalidNameChar returns the byte index of the first character of s
// outside TopicValidator's [%|a-zA-Z0-9_-], or -1 when there is none.
func InvalidNameChar(s string) int { return validName(s) }

func validName(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '%' || c == '|' || c == '_' || c == '-') {
			return i
		}
	}
	return -1
}

// ValidateTopic checks a client-supplied topic name: non-empty, characters
// [%|a-zA-Z0-9_-], at most MaxTopicLength (MaxRetryTopicLength for %RETRY%
// and %DLQ% names). Broker-made V2 retry names contain '+' and are not
// meant for this check. Errors wrap ErrBadName.
func ValidateTopic(topic string) error {
	limit := MaxTopicLength
	if IsRetryTopic(topic) || IsDLQTopic(topic) {
		limit = MaxRetryTopicLength
	}
	switch {
	case topic == "":
		return fmt.Errorf("%w: empty topic", ErrBadName)
	case len(topic) > limit:
		return fmt.Errorf("%w: topic %q longer than %d", ErrBadName, topic, limit)
	}
	if i := validName(topic); i >= 0 {
		return fmt.Errorf("%w: topic %q has illegal character %s at %d", ErrBadName, topic, charAt(topic, i), i)
	}
	return nil
}

// ValidateGroup checks a group name: non-empty, [%|a-zA-Z0-9_-], at most
// MaxGroupLength. Errors wrap ErrBadName.
func ValidateGroup(group string) error {
	switch {
	case group == "":
		return fmt.Errorf("%w: empty group", ErrBadName)
	case len(group) > MaxGroupLength:
		return fmt.Errorf("%w: group %q longer than %d", ErrBadName, group, MaxGroupLength)
	}
	if i := validName(group); i >= 0 {
		return fmt.Errorf("%w: group %q has illegal character %s at %d", ErrBadName, group, charAt(group, i), i)
	}
	return nil
}

// charAt quotes the character that starts at byte i of s for an error
// message: the whole UTF-8 sequence ('主', not the lead byte 'ä'), or the
// byte as a \x escape when it starts no valid sequence.
func charAt(s string, i int) string {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("'\\x%02x'", s[i])
	}
	return strconv.QuoteRune(r)
}
