package broker

// Checks of an admin topic request: the name (TopicValidator, system
// topics), queue counts, perm bits and the attribute change string
// (AdminBrokerProcessor.updateAndCreateTopic,
// common/.../attribute/TopicAttributes.java).

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
)

// MaxTopicQueueNums bounds the queue counts CreateTopic accepts.
const MaxTopicQueueNums = 1024

// topicAttributeValues lists the topic attributes popshim accepts; a nil
// slice accepts any value (common/.../attribute/TopicAttributes.java).
var topicAttributeValues = map[string][]string{
	"message.type":   {"NORMAL", "FIFO", "DELAY", "TRANSACTION"},
	"queue.type":     nil,
	"cleanup.policy": nil,
	"reserve.time":   nil,
}

// applyTopicAttributes applies an attribute change string ("+k=v,-k") to a
// copy of cur and returns it (nil when empty).
func applyTopicAttributes(cur map[string]string, change string) (map[string]string, error) {
	out := maps.Clone(cur)
	if out == nil {
		out = make(map[string]string)
	}
	for _, item := range strings.Split(change, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		switch item[0] {
		case '+':
			k, v, ok := strings.Cut(item[1:], "=")
			if !ok || k == "" || v == "" {
				return nil, fmt.Errorf("attribute %q: want +key=value", item)
			}
			allowed, known := topicAttributeValues[k]
			if !known {
				return nil, fmt.Errorf("unsupported attribute key %q", k)
			}
			if allowed != nil && !slices.Contains(allowed, v) {
				return nil, fmt.Errorf("attribute %s=%s: value must be one of %s", k, v, strings.Join(allowed, ", "))
			}
			out[k] = v
		case '-':
			if item[1:] == "" {
				return nil, fmt.Errorf("attribute %q: want -key", item)
			}
			delete(out, item[1:])
		default:
			return nil, fmt.Errorf("attribute %q must start with + or -", item)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// topicShapeError returns why queue counts or perm of an admin topic
// request are refused (INVALID_PARAMETER), or "".
func topicShapeError(read, write, perm int32) string {
	switch {
	case read < 0 || write < 0 || read > MaxTopicQueueNums || write > MaxTopicQueueNums:
		return fmt.Sprintf("queue nums must be within 0..%d, got read %d write %d", MaxTopicQueueNums, read, write)
	case read == 0 && write == 0:
		return "readQueueNums and writeQueueNums are both 0"
	case perm&^(codec.PermPriority|codec.PermRead|codec.PermWrite|codec.PermInherit) != 0:
		return fmt.Sprintf("perm %d has unknown bits", perm)
	}
	return ""
}

// refuseAdminTopic returns why topic may not be created, updated or
// deleted by an admin request, or nil: an invalid name or a system topic →
// INVALID_PARAMETER (29), the name's remark as TopicValidator.validateTopic
// words it (AdminBrokerProcessor; a 5.1 broker answered SYSTEM_ERROR).
// Reads the topic table only.
func (b *Broker) refuseAdminTopic(topic string) *Error {
	if remark := meta.TopicNameRemark(topic); remark != "" {
		return &Error{Code: codec.InvalidParameter, Remark: remark}
	}
	if b.Topics.IsSystem(topic) {
		return &Error{Code: codec.InvalidParameter, Remark: "The topic[" + topic + "] is conflict with system topic."}
	}
	return nil
}
