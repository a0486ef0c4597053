package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// HeartbeatData is the HEART_BEAT (34) body (heartbeat/HeartbeatData.java;
// the Go client's internal/model.go heartbeatData). Java writes members
// sorted and codeSet as numbers; Go writes struct order, codeSet as numeric
// strings and no heartbeatFingerprint/withoutSub. DecodeHeartbeatData reads both.
type HeartbeatData struct {
	ClientID             string         `json:"clientID"` // ip@instanceName[@unitName]
	ProducerDataSet      []ProducerData `json:"producerDataSet"`
	ConsumerDataSet      []ConsumerData `json:"consumerDataSet"`
	HeartbeatFingerprint int32          `json:"heartbeatFingerprint"` // Java only; 0 when absent
	WithoutSub           bool           `json:"withoutSub"`           // Java only
}

// ProducerData is one producer group of a heartbeat.
type ProducerData struct {
	GroupName string `json:"groupName"`
}

// Consume types, message models and consume-from-where values of ConsumerData (enum names).
const (
	ConsumeActively      = "CONSUME_ACTIVELY"  // pull
	ConsumePassively     = "CONSUME_PASSIVELY" // push
	ConsumePop           = "CONSUME_POP"
	MessageModelCluster  = "CLUSTERING"
	MessageModelBroadcst = "BROADCASTING"
)

// ConsumerData is one consumer group of a heartbeat (heartbeat/ConsumerData.java).
type ConsumerData struct {
	GroupName           string             `json:"groupName"`
	ConsumeType         string             `json:"consumeType"`      // Consume* constants
	MessageModel        string             `json:"messageModel"`     // MessageModel* constants
	ConsumeFromWhere    string             `json:"consumeFromWhere"` // e.g. CONSUME_FROM_LAST_OFFSET
	SubscriptionDataSet []SubscriptionData `json:"subscriptionDataSet"`
	UnitMode            bool               `json:"unitMode"`
}

// SubscriptionData is one subscription (heartbeat/SubscriptionData.java).
// CodeSet holds Java String.hashCode() of each tag.
type SubscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	Topic           string   `json:"topic"`
	SubString       string   `json:"subString"` // expression, "*" = all
	TagsSet         []string `json:"tagsSet"`
	CodeSet         CodeSet  `json:"codeSet"`
	SubVersion      int64    `json:"subVersion"`     // milliseconds timestamp
	ExpressionType  string   `json:"expressionType"` // "TAG" / "SQL92"
}

// CodeSet is a list of tag hash codes that decodes from JSON numbers or
// numeric strings (the Go client's form) and encodes as numbers.
type CodeSet []int32

// UnmarshalJSON accepts [1,2], ["1","2"], mixed, or null.
func (c *CodeSet) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*c = nil
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(CodeSet, 0, len(raw))
	for _, r := range raw {
		s := string(r)
		if len(s) >= 2 && s[0] == '"' {
			if err := json.Unmarshal(r, &s); err != nil {
				return err
			}
		}
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return fmt.Errorf("codeSet element %s: %v", string(r), err)
		}
		out = append(out, int32(v))
	}
	*c = out
	return nil
}

// TagHashCode returns Java's String.hashCode() of tag (UTF-16 code units),
// the value clients put in SubscriptionData.CodeSet.
func TagHashCode(tag string) int32 {
	var h int32
	for _, r := range tag {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// DecodeHeartbeatData parses a HEART_BEAT body from either client. Unknown
// members are ignored. Errors wrap ErrInvalidField.
func DecodeHeartbeatData(b []byte) (HeartbeatData, error) {
	var h HeartbeatData
	if err := json.Unmarshal(b, &h); err != nil {
		return HeartbeatData{}, fmt.Errorf("%w: heartbeat body: %v", ErrInvalidField, err)
	}
	return h, nil
}

// EncodeHeartbeatData returns the body as JSON (for tests and tools).
func EncodeHeartbeatData(h *HeartbeatData) []byte {
	b, _ := json.Marshal(h) // plain data: cannot fail
	return b
}
