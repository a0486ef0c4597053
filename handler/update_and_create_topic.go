package handler

// UPDATE_AND_CREATE_TOPIC (17).
//
// Header (CreateTopicRequestHeader.java): topic, readQueueNums,
// writeQueueNums, perm (required); defaultTopic, topicFilterType,
// topicSysFlag, order, attributes ("+key=value,-key"), force (optional).
//
// Behaviour:
//   - The topic name is checked as TopicValidator does ([%|a-zA-Z0-9_-],
//     at most 127 characters, 255 for %RETRY%/%DLQ%); system topics (the
//     cluster-name and broker-name topics, and TopicValidator.isSystemTopic's
//     names: TBW102, SCHEDULE_TOPIC_XXXX, RMQ_SYS_TRACE_TOPIC, ..., rmq_sys_*)
//     cannot be created or changed: INVALID_PARAMETER (29) "The topic[...]
//     is conflict with system topic." (AdminBrokerProcessor.updateAndCreateTopic).
//   - Queue counts must be 0..1024 with at least one of them positive; perm
//     must only use the bits 8|4|2|1.
//   - attributes are applied to the existing ones: "+k=v" sets, "-k"
//     removes. Known keys: message.type (NORMAL, FIFO, DELAY, TRANSACTION),
//     queue.type, cleanup.policy, reserve.time.
//   - The configuration is written through the writer (background lane);
//     the reply waits until it is fsynced, and the new route is visible to
//     GET_ROUTEINFO_BY_TOPIC from that moment (the proxy reads it right after).
//   - With --namesrv-addr the reply also waits for a REGISTER_BROKER that
//     carries the new table (Registrar.RegisterNow), as a Java broker
//     registers with its name servers before it answers
//     (registerIncrementBrokerData): the 5.5 proxy asks the name servers for
//     the route right after this reply (interop FINDINGS F3). That wait is
//     bounded by createRegisterTimeout (3 s); after it the reply is SUCCESS
//     anyway (the topic is durable) and the registrar's next round, at most
//     a second later, carries the topic. The event loop never waits: the
//     reply goes out from the registrar's or a timer goroutine.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) for an invalid topic name (as
// Java), a missing header field or a failed write; INVALID_PARAMETER (29) for
// bad queue counts, perm or attributes, or a system topic; SYSTEM_BUSY (2)
// when the lane is full.

import (
	"fmt"
	"strings"
	"time"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// maxTopicQueueNums bounds queue counts accepted from admin requests.
const maxTopicQueueNums = 1024

// createRegisterTimeout bounds how long UPDATE_AND_CREATE_TOPIC waits for
// the name servers to acknowledge the registration of the new topic.
const createRegisterTimeout = 3 * time.Second

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
	out := make(map[string]string, len(cur))
	for k, v := range cur {
		out[k] = v
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
			if allowed != nil && !containsString(allowed, v) {
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
	case read < 0 || write < 0 || read > maxTopicQueueNums || write > maxTopicQueueNums:
		return fmt.Sprintf("queue nums must be within 0..%d, got read %d write %d", maxTopicQueueNums, read, write)
	case read == 0 && write == 0:
		return "readQueueNums and writeQueueNums are both 0"
	case perm&^(codec.PermPriority|codec.PermRead|codec.PermWrite|codec.PermInherit) != 0:
		return fmt.Sprintf("perm %d has unknown bits", perm)
	}
	return ""
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (b *Broker) handleUpdateAndCreateTopic(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeCreateTopicRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	if b.refuseAdminTopic(c, req, h.Topic) {
		return
	}
	if remark := topicShapeError(h.ReadQueueNums, h.WriteQueueNums, h.Perm); remark != "" {
		reply.Code(c, req, codec.InvalidParameter, remark)
		return
	}
	var cur map[string]string
	if old, ok := b.Topics.Get(h.Topic); ok {
		cur = old.Attributes
	}
	attrs, err := applyTopicAttributes(cur, h.Attributes)
	if err != nil {
		reply.Code(c, req, codec.InvalidParameter, err.Error())
		return
	}
	m := popstore.TopicMeta{
		TopicName: h.Topic, ReadQueueNums: h.ReadQueueNums, WriteQueueNums: h.WriteQueueNums,
		Perm: h.Perm, TopicFilterType: h.TopicFilterType, TopicSysFlag: h.TopicSysFlag,
		Order: h.Order, Attributes: attrs,
	}
	done := func(err error) {
		if err != nil || b.registrar == nil {
			reply.Done(c, req, err)
			return
		}
		b.registrar.RegisterNow(createRegisterTimeout, func() { reply.Done(c, req, nil) })
	}
	if err := b.Topics.Create(m, done); err != nil {
		reply.SubmitError(c, req, err)
	}
}

// refuseAdminTopic answers and returns true when topic may not be created,
// updated or deleted by an admin request: an invalid name → SYSTEM_ERROR (1),
// as the Java broker's TopicValidator answers; a system topic →
// INVALID_PARAMETER (29). Event loop; reads the topic table only.
func (b *Broker) refuseAdminTopic(c remoting.Conn, req *codec.Command, topic string) bool {
	if err := meta.ValidateTopicName(topic); err != nil {
		reply.Code(c, req, codec.SystemError, err.Error())
		return true
	}
	if b.Topics.IsSystem(topic) {
		reply.Code(c, req, codec.InvalidParameter, "The topic["+topic+"] is conflict with system topic.")
		return true
	}
	return false
}
