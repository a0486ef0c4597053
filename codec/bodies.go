package codec

import (
	"encoding/json"
	"fmt"
)

// The smaller JSON bodies. encoding/json is used throughout: none of them
// is on a hot path and clients parse them with full JSON parsers (the Go
// client reads consumerIdList with gjson).

func decodeJSONBody(what string, b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s body: %v", ErrInvalidField, what, err)
	}
	return nil
}

func encodeJSONBody(v any) []byte {
	b, _ := json.Marshal(v) // plain data: cannot fail
	return b
}

// ConsumerListBody is the GET_CONSUMER_LIST_BY_GROUP (38) SUCCESS body
// (body/GetConsumerListByGroupResponseBody.java): {"consumerIdList":[...]}.
type ConsumerListBody struct {
	ConsumerIDList []string `json:"consumerIdList"`
}

// EncodeConsumerListBody returns the body; a nil list is written as [].
func EncodeConsumerListBody(ids []string) []byte {
	if ids == nil {
		ids = []string{}
	}
	return encodeJSONBody(ConsumerListBody{ConsumerIDList: ids})
}

// DecodeConsumerListBody parses the body.
func DecodeConsumerListBody(b []byte) (ConsumerListBody, error) {
	var v ConsumerListBody
	return v, decodeJSONBody("consumer list", b, &v)
}

// MessageQueue names one queue (common/.../message/MessageQueue.java).
type MessageQueue struct {
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"` // -1 in POP assignments: any queue of the broker
	Topic      string `json:"topic"`
}

// Message request modes (common/.../message/MessageRequestMode.java).
const (
	MessageRequestModePull = "PULL"
	MessageRequestModePop  = "POP"
)

// QueryAssignmentRequestBody is the QUERY_ASSIGNMENT (400) request body
// (body/QueryAssignmentRequestBody.java).
type QueryAssignmentRequestBody struct {
	ClientID      string `json:"clientId"`
	ConsumerGroup string `json:"consumerGroup"`
	MessageModel  string `json:"messageModel"` // CLUSTERING / BROADCASTING
	StrategyName  string `json:"strategyName"` // AVG, AVG_BY_CIRCLE, ...
	Topic         string `json:"topic"`
}

// DecodeQueryAssignmentRequestBody parses the request body.
func DecodeQueryAssignmentRequestBody(b []byte) (QueryAssignmentRequestBody, error) {
	var v QueryAssignmentRequestBody
	return v, decodeJSONBody("query assignment", b, &v)
}

// MessageQueueAssignment is one entry of a QUERY_ASSIGNMENT answer
// (common/.../message/MessageQueueAssignment.java).
type MessageQueueAssignment struct {
	Attachments  map[string]string `json:"attachments,omitempty"`
	MessageQueue MessageQueue      `json:"messageQueue"`
	Mode         string            `json:"mode"` // MessageRequestModePull / MessageRequestModePop
}

// QueryAssignmentResponseBody is the QUERY_ASSIGNMENT SUCCESS body
// (body/QueryAssignmentResponseBody.java). A nil Assignments slice is written
// as null ("keep the current assignment"); an empty non-nil one as []
// ("you have nothing").
type QueryAssignmentResponseBody struct {
	MessageQueueAssignments []MessageQueueAssignment `json:"messageQueueAssignments"`
}

// EncodeQueryAssignmentResponseBody returns the body.
func EncodeQueryAssignmentResponseBody(v *QueryAssignmentResponseBody) []byte {
	return encodeJSONBody(v)
}

// DecodeQueryAssignmentResponseBody parses the body.
func DecodeQueryAssignmentResponseBody(b []byte) (QueryAssignmentResponseBody, error) {
	var v QueryAssignmentResponseBody
	return v, decodeJSONBody("query assignment response", b, &v)
}

// SetMessageRequestModeRequestBody is the SET_MESSAGE_REQUEST_MODE (401)
// request body (body/SetMessageRequestModeRequestBody.java).
type SetMessageRequestModeRequestBody struct {
	ConsumerGroup    string `json:"consumerGroup"`
	Mode             string `json:"mode"`
	PopShareQueueNum int32  `json:"popShareQueueNum"`
	Topic            string `json:"topic"`
}

// DecodeSetMessageRequestModeRequestBody parses the body.
func DecodeSetMessageRequestModeRequestBody(b []byte) (SetMessageRequestModeRequestBody, error) {
	var v SetMessageRequestModeRequestBody
	return v, decodeJSONBody("set message request mode", b, &v)
}

// KVTable is the GET_BROKER_RUNTIME_INFO (28) body (body/KVTable.java):
// {"table":{"brokerVersion":"479",...}}, all values strings.
type KVTable struct {
	Table map[string]string `json:"table"`
}

// EncodeKVTable returns {"table":{...}} with keys sorted.
func EncodeKVTable(table map[string]string) []byte {
	if table == nil {
		table = map[string]string{}
	}
	return encodeJSONBody(KVTable{Table: table})
}

// DecodeKVTable parses the body.
func DecodeKVTable(b []byte) (KVTable, error) {
	var v KVTable
	return v, decodeJSONBody("kv table", b, &v)
}

// TopicConfig is a topic's configuration as JSON (common/.../TopicConfig.java):
// the GET_TOPIC_CONFIG (351) SUCCESS body (TopicConfigAndQueueMapping
// without mapping detail) and the values of GET_ALL_TOPIC_CONFIG's table.
type TopicConfig struct {
	Attributes      map[string]string `json:"attributes"`
	Order           bool              `json:"order"`
	Perm            int32             `json:"perm"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	TopicFilterType string            `json:"topicFilterType"`
	TopicName       string            `json:"topicName"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
}

// EncodeTopicConfig returns the JSON body; nil Attributes are written as {}.
func EncodeTopicConfig(c *TopicConfig) []byte {
	v := *c
	if v.Attributes == nil {
		v.Attributes = map[string]string{}
	}
	if v.TopicFilterType == "" {
		v.TopicFilterType = TopicFilterSingleTag
	}
	return encodeJSONBody(&v)
}

// DecodeTopicConfig parses the body.
func DecodeTopicConfig(b []byte) (TopicConfig, error) {
	var v TopicConfig
	return v, decodeJSONBody("topic config", b, &v)
}

// DataVersion is the version stamp of broker metadata (common/.../DataVersion.java).
type DataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"` // milliseconds
}

// TopicConfigWrapper is the GET_ALL_TOPIC_CONFIG (21) SUCCESS body
// (body/TopicConfigSerializeWrapper.java, mapping members omitted).
type TopicConfigWrapper struct {
	DataVersion      DataVersion            `json:"dataVersion"`
	TopicConfigTable map[string]TopicConfig `json:"topicConfigTable"`
}

// EncodeTopicConfigWrapper returns the JSON body.
func EncodeTopicConfigWrapper(w *TopicConfigWrapper) []byte { return encodeJSONBody(w) }

// DecodeTopicConfigWrapper parses the body.
func DecodeTopicConfigWrapper(b []byte) (TopicConfigWrapper, error) {
	var v TopicConfigWrapper
	return v, decodeJSONBody("topic config table", b, &v)
}

// LockBatchRequestBody is the LOCK_BATCH_MQ / UNLOCK_BATCH_MQ (41/42)
// request body (body/LockBatchRequestBody.java, UnlockBatchRequestBody.java).
type LockBatchRequestBody struct {
	ClientID       string         `json:"clientId"`
	ConsumerGroup  string         `json:"consumerGroup"`
	MQSet          []MessageQueue `json:"mqSet"`
	OnlyThisBroker bool           `json:"onlyThisBroker"`
}

// DecodeLockBatchRequestBody parses the body.
func DecodeLockBatchRequestBody(b []byte) (LockBatchRequestBody, error) {
	var v LockBatchRequestBody
	return v, decodeJSONBody("lock batch", b, &v)
}

// EncodeLockBatchResponseBody returns {"lockOKMQSet":[...]} (LockBatchResponseBody.java).
func EncodeLockBatchResponseBody(locked []MessageQueue) []byte {
	if locked == nil {
		locked = []MessageQueue{}
	}
	return encodeJSONBody(struct {
		LockOKMQSet []MessageQueue `json:"lockOKMQSet"`
	}{locked})
}
