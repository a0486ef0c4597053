package codec

import (
	"bytes"
	"encoding/json"
)

// Bodies of the answers to requests a broker forwards to a consumer:
// GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY (309).
// Remoting clients write them themselves; popshim writes them for v5
// consumers of its gRPC endpoint, from their Telemetry answers, in the
// shape rocketmq-proxy gives (fastjson: fields in name order, null fields
// left out).

// ConsumerRunningInfo is the GET_CONSUMER_RUNNING_INFO SUCCESS body
// (remoting/.../protocol/body/ConsumerRunningInfo.java) as rocketmq-proxy
// builds it for a v5 client: every table empty and the client's thread
// dump in jstack (ClientActivity.reportThreadStackTrace). The tables are
// kept as raw JSON so a decoder of a remoting client's full answer loses
// nothing.
type ConsumerRunningInfo struct {
	Jstack           string          `json:"jstack,omitempty"`
	MqPopTable       json.RawMessage `json:"mqPopTable"`
	MqTable          json.RawMessage `json:"mqTable"`
	Properties       json.RawMessage `json:"properties"`
	StatusTable      json.RawMessage `json:"statusTable"`
	SubscriptionSet  json.RawMessage `json:"subscriptionSet"`
	UserConsumerInfo json.RawMessage `json:"userConsumerInfo"`
}

// EncodeJstackRunningInfo returns the ConsumerRunningInfo body with only
// jstack set: {"jstack":…,"mqPopTable":{},"mqTable":{},"properties":{},
// "statusTable":{},"subscriptionSet":[],"userConsumerInfo":{}}.
func EncodeJstackRunningInfo(jstack string) []byte {
	empty, none := json.RawMessage("{}"), json.RawMessage("[]")
	return encodeJSONNoEscape(ConsumerRunningInfo{Jstack: jstack, MqPopTable: empty, MqTable: empty,
		Properties: empty, StatusTable: empty, SubscriptionSet: none, UserConsumerInfo: empty})
}

// CMResult values of ConsumeMessageDirectlyResult.consumeResult
// (remoting/.../protocol/body/CMResult.java).
const (
	CMResultSuccess    = "CR_SUCCESS"
	CMResultLater      = "CR_LATER"
	CMResultRollback   = "CR_ROLLBACK"
	CMResultCommit     = "CR_COMMIT"
	CMResultThrowEx    = "CR_THROW_EXCEPTION"
	CMResultReturnNull = "CR_RETURN_NULL"
)

// ConsumeMessageDirectlyResult is the CONSUME_MESSAGE_DIRECTLY SUCCESS
// body (remoting/.../protocol/body/ConsumeMessageDirectlyResult.java):
// whether the listener is orderly, autoCommit, the listener's result (a
// CMResult name; "" is left out, Java's null), a remark and the
// listener's time in milliseconds (spentTimeMills, sic).
type ConsumeMessageDirectlyResult struct {
	AutoCommit     bool   `json:"autoCommit"`
	ConsumeResult  string `json:"consumeResult,omitempty"`
	Order          bool   `json:"order"`
	Remark         string `json:"remark,omitempty"`
	SpentTimeMills int64  `json:"spentTimeMills"`
}

// EncodeConsumeMessageDirectlyResult returns r as the body.
func EncodeConsumeMessageDirectlyResult(r ConsumeMessageDirectlyResult) []byte {
	return encodeJSONNoEscape(r)
}

// encodeJSONNoEscape is encodeJSONBody without the HTML escaping of <, >
// and & (fastjson writes them as they are; a thread dump is full of
// them).
func encodeJSONNoEscape(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // plain data: cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
