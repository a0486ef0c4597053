package codec

// Bodies of the admin statistics and connection codes that mqadmin parses
// with fastjson2 (RocketMQ 5.5 RemotingSerializable): GET_TOPIC_STATS_INFO
// (202), GET_CONSUME_STATS (208), INVOKE_BROKER_TO_RESET_OFFSET (222),
// GET_CONSUMER_CONNECTION_LIST (203),
// GET_PRODUCER_CONNECTION_LIST (204), QUERY_TOPIC_CONSUME_BY_WHO (300), and
// the UPDATE_AND_CREATE_TOPIC_LIST (18) request body.
//
// The three offset tables are Map<MessageQueue, X> in Java. fastjson2 writes
// such a key as a JSON object, not a string, and reads it back the same
// way: {"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{...}}}
// (checked against fastjson2 2.0.59 from rocketmq-tools 5.5.0). That is not
// standard JSON, so these bodies are appended by hand; encoding/json could
// not produce them.

import (
	"encoding/json"
	"slices"
	"strconv"
)

// TopicOffset is one queue of a TopicStatsTable (admin/TopicOffset.java).
type TopicOffset struct {
	Queue MessageQueue
	// MinOffset and MaxOffset are queue offsets (MaxOffset is one past the
	// last message); LastUpdateTimestamp is the store time in ms of the
	// message at MaxOffset-1, 0 for an empty queue.
	MinOffset, MaxOffset, LastUpdateTimestamp int64
}

// OffsetWrapper is one queue of a ConsumeStats (admin/OffsetWrapper.java).
type OffsetWrapper struct {
	Queue MessageQueue
	// BrokerOffset is the queue's max offset; ConsumerOffset the group's
	// committed offset; PullOffset max(consumer, pull) offset;
	// LastTimestamp the store time in ms of the message at ConsumerOffset-1
	// (0 when none).
	BrokerOffset, ConsumerOffset, PullOffset, LastTimestamp int64
}

func sortQueues[T any](rows []T, mq func(*T) MessageQueue) {
	slices.SortFunc(rows, func(a, b T) int {
		qa, qb := mq(&a), mq(&b)
		switch {
		case qa.Topic != qb.Topic:
			if qa.Topic < qb.Topic {
				return -1
			}
			return 1
		case qa.BrokerName != qb.BrokerName:
			if qa.BrokerName < qb.BrokerName {
				return -1
			}
			return 1
		}
		return int(qa.QueueID) - int(qb.QueueID)
	})
}

// appendMessageQueueKey appends mq as fastjson2 writes it, members sorted.
func appendMessageQueueKey(dst []byte, mq MessageQueue) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = strconv.AppendQuote(dst, mq.BrokerName)
	dst = append(dst, `,"queueId":`...)
	dst = strconv.AppendInt(dst, int64(mq.QueueID), 10)
	dst = append(dst, `,"topic":`...)
	dst = strconv.AppendQuote(dst, mq.Topic)
	return append(dst, '}')
}

// appendJavaDouble appends v as fastjson2 writes a double (0.0, 1.5).
func appendJavaDouble(dst []byte, v float64) []byte {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	dst = append(dst, s...)
	if !containsByte(s, '.') {
		dst = append(dst, ".0"...)
	}
	return dst
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// AppendTopicStatsTable appends the GET_TOPIC_STATS_INFO (202) body
// (admin/TopicStatsTable.java): {"offsetTable":{MQ:{lastUpdateTimestamp,
// maxOffset,minOffset},...},"topicPutTps":tps}, queues sorted. rows is
// sorted in place.
func AppendTopicStatsTable(dst []byte, rows []TopicOffset, putTps float64) []byte {
	sortQueues(rows, func(r *TopicOffset) MessageQueue { return r.Queue })
	dst = append(dst, `{"offsetTable":{`...)
	for i, r := range rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessageQueueKey(dst, r.Queue)
		dst = append(dst, `:{"lastUpdateTimestamp":`...)
		dst = strconv.AppendInt(dst, r.LastUpdateTimestamp, 10)
		dst = append(dst, `,"maxOffset":`...)
		dst = strconv.AppendInt(dst, r.MaxOffset, 10)
		dst = append(dst, `,"minOffset":`...)
		dst = strconv.AppendInt(dst, r.MinOffset, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `},"topicPutTps":`...)
	dst = appendJavaDouble(dst, putTps)
	return append(dst, '}')
}

// AppendConsumeStats appends the GET_CONSUME_STATS (208) body
// (admin/ConsumeStats.java): {"consumeTps":tps,"offsetTable":{MQ:
// {brokerOffset,consumerOffset,lastTimestamp,pullOffset},...}}, queues
// sorted. rows is sorted in place.
func AppendConsumeStats(dst []byte, rows []OffsetWrapper, consumeTps float64) []byte {
	sortQueues(rows, func(r *OffsetWrapper) MessageQueue { return r.Queue })
	dst = append(dst, `{"consumeTps":`...)
	dst = appendJavaDouble(dst, consumeTps)
	dst = append(dst, `,"offsetTable":{`...)
	for i, r := range rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessageQueueKey(dst, r.Queue)
		dst = append(dst, `:{"brokerOffset":`...)
		dst = strconv.AppendInt(dst, r.BrokerOffset, 10)
		dst = append(dst, `,"consumerOffset":`...)
		dst = strconv.AppendInt(dst, r.ConsumerOffset, 10)
		dst = append(dst, `,"lastTimestamp":`...)
		dst = strconv.AppendInt(dst, r.LastTimestamp, 10)
		dst = append(dst, `,"pullOffset":`...)
		dst = strconv.AppendInt(dst, r.PullOffset, 10)
		dst = append(dst, '}')
	}
	return append(dst, "}}"...)
}

// QueueOffset is one queue of a ResetOffsetBody and its new offset.
type QueueOffset struct {
	Queue  MessageQueue
	Offset int64
}

// AppendResetOffsetBody appends the INVOKE_BROKER_TO_RESET_OFFSET (222)
// SUCCESS body (body/ResetOffsetBody.java): {"offsetTable":{MQ:offset,...}},
// queues sorted. rows is sorted in place.
func AppendResetOffsetBody(dst []byte, rows []QueueOffset) []byte {
	sortQueues(rows, func(r *QueueOffset) MessageQueue { return r.Queue })
	dst = append(dst, `{"offsetTable":{`...)
	for i, r := range rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessageQueueKey(dst, r.Queue)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, r.Offset, 10)
	}
	return append(dst, "}}"...)
}

// Connection is one client connection of a ConsumerConnection or
// ProducerConnection (body/Connection.java): the HEART_BEAT clientID, the
// remote address "ip:port", the language enum name ("JAVA", "GO", ...) and
// the client's MQVersion ordinal.
type Connection struct {
	ClientAddr string `json:"clientAddr"`
	ClientID   string `json:"clientId"`
	Language   string `json:"language"`
	Version    int32  `json:"version"`
}

// ConsumerConnection is the GET_CONSUMER_CONNECTION_LIST (203) SUCCESS body
// (body/ConsumerConnection.java): enum fields by name (ConsumeType
// CONSUME_ACTIVELY|CONSUME_PASSIVELY|CONSUME_POP, MessageModel
// CLUSTERING|BROADCASTING, ConsumeFromWhere), omitted when empty as
// fastjson2 omits nulls. Subscriptions are keyed by topic.
type ConsumerConnection struct {
	ConnectionSet     []Connection                `json:"connectionSet"`
	ConsumeFromWhere  string                      `json:"consumeFromWhere,omitempty"`
	ConsumeType       string                      `json:"consumeType,omitempty"`
	MessageModel      string                      `json:"messageModel,omitempty"`
	SubscriptionTable map[string]SubscriptionData `json:"subscriptionTable"`
}

// EncodeConsumerConnection returns the body; nil collections are written
// as [] and {}, and each subscription's nil sets as [].
func EncodeConsumerConnection(v ConsumerConnection) []byte {
	if v.ConnectionSet == nil {
		v.ConnectionSet = []Connection{}
	}
	subs := make(map[string]SubscriptionData, len(v.SubscriptionTable))
	for k, s := range v.SubscriptionTable {
		if s.CodeSet == nil {
			s.CodeSet = CodeSet{}
		}
		if s.TagsSet == nil {
			s.TagsSet = []string{}
		}
		subs[k] = s
	}
	v.SubscriptionTable = subs
	return encodeJSONBody(&v)
}

// DecodeConsumerConnection parses the body.
func DecodeConsumerConnection(b []byte) (ConsumerConnection, error) {
	var v ConsumerConnection
	return v, decodeJSONBody("consumer connection", b, &v)
}

// ProducerConnection is the GET_PRODUCER_CONNECTION_LIST (204) SUCCESS body
// (body/ProducerConnection.java).
type ProducerConnection struct {
	ConnectionSet []Connection `json:"connectionSet"`
}

// EncodeProducerConnection returns the body; a nil set is written as [].
func EncodeProducerConnection(conns []Connection) []byte {
	if conns == nil {
		conns = []Connection{}
	}
	return encodeJSONBody(ProducerConnection{ConnectionSet: conns})
}

// DecodeProducerConnection parses the body.
func DecodeProducerConnection(b []byte) (ProducerConnection, error) {
	var v ProducerConnection
	return v, decodeJSONBody("producer connection", b, &v)
}

// ProducerInfo is one live producer client of a ProducerTableInfo
// (body/ProducerInfo.java): the HEART_BEAT clientID, the remote address as
// Java prints a channel's ("/ip:port"), the language enum name, the
// client's MQVersion ordinal and its last heartbeat, Unix ms.
type ProducerInfo struct {
	ClientID            string `json:"clientId"`
	RemoteIP            string `json:"remoteIP"`
	Language            string `json:"language"`
	Version             int32  `json:"version"`
	LastUpdateTimestamp int64  `json:"lastUpdateTimestamp"`
}

// ProducerTableInfo is the GET_ALL_PRODUCER_INFO (328) SUCCESS body
// (body/ProducerTableInfo.java): producerGroup → its clients.
type ProducerTableInfo struct {
	Data map[string][]ProducerInfo `json:"data"`
}

// EncodeProducerTableInfo returns the body; a nil map is written as {}.
func EncodeProducerTableInfo(v ProducerTableInfo) []byte {
	if v.Data == nil {
		v.Data = map[string][]ProducerInfo{}
	}
	return encodeJSONBody(v)
}

// DecodeProducerTableInfo parses the body.
func DecodeProducerTableInfo(b []byte) (ProducerTableInfo, error) {
	var v ProducerTableInfo
	return v, decodeJSONBody("producer table", b, &v)
}

// GroupList is the QUERY_TOPIC_CONSUME_BY_WHO (300) SUCCESS body
// (body/GroupList.java): {"groupList":[...]}.
type GroupList struct {
	GroupList []string `json:"groupList"`
}

// EncodeGroupList returns the body; a nil list is written as [].
func EncodeGroupList(groups []string) []byte {
	if groups == nil {
		groups = []string{}
	}
	return encodeJSONBody(GroupList{GroupList: groups})
}

// DecodeGroupList parses the body.
func DecodeGroupList(b []byte) (GroupList, error) {
	var v GroupList
	return v, decodeJSONBody("group list", b, &v)
}

// CreateTopicListRequestBody is the UPDATE_AND_CREATE_TOPIC_LIST (18)
// request body (body/CreateTopicListRequestBody.java). Attribute keys carry
// the "+"/"-" operator prefix, as in UPDATE_AND_CREATE_TOPIC's header.
type CreateTopicListRequestBody struct {
	TopicConfigList []TopicConfig `json:"topicConfigList"`
}

// DecodeCreateTopicListRequestBody parses the body; a missing or null
// topicConfigList is an error (@CFNotNull in Java).
func DecodeCreateTopicListRequestBody(b []byte) (CreateTopicListRequestBody, error) {
	var v CreateTopicListRequestBody
	if err := decodeJSONBody("create topic list", b, &v); err != nil {
		return v, err
	}
	if v.TopicConfigList == nil {
		return v, &FieldError{Field: "topicConfigList", Err: ErrMissingField}
	}
	return v, nil
}

// EncodeCreateTopicListRequestBody returns the request body (tests and
// tools).
func EncodeCreateTopicListRequestBody(list []TopicConfig) []byte {
	b, _ := json.Marshal(CreateTopicListRequestBody{TopicConfigList: list})
	return b
}
