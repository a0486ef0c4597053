package codec

import (
	"errors"
	"maps"
	"reflect"
	"testing"
)

type headerCase struct {
	name     string
	encode   func(*Command)
	decode   func(map[string]string) (any, error)
	want     any
	required []string // keys whose absence must be a FieldError
	numeric  []string // keys whose non-numeric value must be a FieldError
}

func wrap[T any](f func(map[string]string) (T, error)) func(map[string]string) (any, error) {
	return func(m map[string]string) (any, error) { return f(m) }
}

func headerCases() []headerCase {
	send := SendMessageRequestHeader{ProducerGroup: "PG", Topic: "TopicA", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: -1, SysFlag: 0x301, BornTimestamp: 1700000000000, Flag: 7, Properties: "TAGS\x01A\x02", ReconsumeTimes: 2,
		UnitMode: true, MaxReconsumeTimes: 16, HasMaxReconsumeTimes: true, Batch: true, BrokerName: "broker-a"}
	sendReq := []string{"producerGroup", "topic", "queueId", "sysFlag", "bornTimestamp", "flag"}
	sendReqV2 := []string{"a", "b", "e", "f", "g", "h"}
	return []headerCase{
		{"send-v1", send.Encode, wrap(DecodeSendMessageRequestHeader), send, sendReq, []string{"defaultTopicQueueNums", "queueId", "bornTimestamp", "maxReconsumeTimes"}},
		{"send-v2", send.EncodeV2, wrap(DecodeSendMessageRequestHeaderV2), send, sendReqV2, []string{"d", "e", "g", "j", "l"}},
		{"send-v2-by-code", send.EncodeV2, wrap(func(m map[string]string) (SendMessageRequestHeader, error) {
			return DecodeSendRequestHeader(RequestSendBatchMessage, m)
		}), send, sendReqV2, nil},
		{"send-response", SendMessageResponseHeader{MsgID: "C0A8011400002A9F0000000000100000", QueueID: 3, QueueOffset: 99,
			TransactionID: "X", MsgRegion: "DefaultRegion", TraceOn: true}.Encode, wrap(DecodeSendMessageResponseHeader),
			SendMessageResponseHeader{MsgID: "C0A8011400002A9F0000000000100000", QueueID: 3, QueueOffset: 99, TransactionID: "X", MsgRegion: "DefaultRegion", TraceOn: true},
			[]string{"msgId", "queueId", "queueOffset"}, []string{"queueId", "queueOffset"}},
		{"pull", PullMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 1, QueueOffset: 5, MaxMsgNums: 32, SysFlag: 3,
			CommitOffset: 4, SuspendTimeoutMillis: 15000, Subscription: "*", SubVersion: 9, ExpressionType: "TAG", MaxMsgBytes: 100, BrokerName: "b"}.Encode,
			wrap(DecodePullMessageRequestHeader),
			PullMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 1, QueueOffset: 5, MaxMsgNums: 32, SysFlag: 3,
				CommitOffset: 4, SuspendTimeoutMillis: 15000, Subscription: "*", SubVersion: 9, ExpressionType: "TAG", MaxMsgBytes: 100, BrokerName: "b"},
			[]string{"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset", "suspendTimeoutMillis", "subVersion"},
			[]string{"maxMsgBytes"}},
		{"pull-response", PullMessageResponseHeader{1, 2, 3, 4}.Encode, wrap(DecodePullMessageResponseHeader), PullMessageResponseHeader{1, 2, 3, 4},
			[]string{"suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset"}, nil},
		{"pop", PopMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60000, PollTime: 15000,
			BornTime: 1, InitMode: 1, ExpType: "TAG", Exp: "a||b", Order: true, AttemptID: "x", BrokerName: "b"}.Encode,
			wrap(DecodePopMessageRequestHeader),
			PopMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60000, PollTime: 15000,
				BornTime: 1, InitMode: 1, ExpType: "TAG", Exp: "a||b", Order: true, AttemptID: "x", BrokerName: "b"},
			[]string{"consumerGroup", "topic", "queueId", "maxMsgNums", "invisibleTime"}, []string{"pollTime", "bornTime", "initMode"}},
		{"pop-response", PopMessageResponseHeader{PopTime: 1, InvisibleTime: 2, ReviveQid: 3, RestNum: 4, StartOffsetInfo: "0 1 2", MsgOffsetInfo: "0 1 2", OrderCountInfo: "0 1 1"}.Encode,
			wrap(DecodePopMessageResponseHeader),
			PopMessageResponseHeader{PopTime: 1, InvisibleTime: 2, ReviveQid: 3, RestNum: 4, StartOffsetInfo: "0 1 2", MsgOffsetInfo: "0 1 2", OrderCountInfo: "0 1 1"},
			[]string{"popTime", "invisibleTime", "reviveQid", "restNum"}, nil},
		{"ack", AckMessageRequestHeader{"G", "T", 1, 42, "40 1 2 3 0 b 1 42", "b"}.Encode, wrap(DecodeAckMessageRequestHeader),
			AckMessageRequestHeader{"G", "T", 1, 42, "40 1 2 3 0 b 1 42", "b"},
			[]string{"consumerGroup", "topic", "queueId", "offset", "extraInfo"}, []string{"queueId", "offset"}},
		{"change", ChangeInvisibleTimeRequestHeader{"G", "T", 1, 42, "e", 5000, "b"}.Encode, wrap(DecodeChangeInvisibleTimeRequestHeader),
			ChangeInvisibleTimeRequestHeader{"G", "T", 1, 42, "e", 5000, "b"},
			[]string{"consumerGroup", "topic", "queueId", "offset", "extraInfo", "invisibleTime"}, []string{"invisibleTime"}},
		{"change-response", ChangeInvisibleTimeResponseHeader{1, 2, 3}.Encode, wrap(DecodeChangeInvisibleTimeResponseHeader),
			ChangeInvisibleTimeResponseHeader{1, 2, 3}, []string{"popTime", "invisibleTime", "reviveQid"}, nil},
		{"notification", NotificationRequestHeader{"G", "T", -1, 100, 200, true, "a", "b"}.Encode, wrap(DecodeNotificationRequestHeader),
			NotificationRequestHeader{"G", "T", -1, 100, 200, true, "a", "b"}, []string{"consumerGroup", "topic", "queueId"}, []string{"pollTime"}},
		{"notification-response", NotificationResponseHeader{true, true}.Encode, wrap(DecodeNotificationResponseHeader),
			NotificationResponseHeader{true, true}, nil, nil},
		{"unregister", UnregisterClientRequestHeader{"c", "p", "g"}.Encode, wrap(DecodeUnregisterClientRequestHeader),
			UnregisterClientRequestHeader{"c", "p", "g"}, []string{"clientID"}, nil},
		{"consumer-list", ConsumerGroupHeader{"G"}.Encode, wrap(DecodeGetConsumerListByGroupRequestHeader), ConsumerGroupHeader{"G"}, []string{"consumerGroup"}, nil},
		{"min-offset", QueueHeader{"T", 2, "b"}.Encode, wrap(DecodeGetMinOffsetRequestHeader), QueueHeader{"T", 2, "b"}, []string{"topic", "queueId"}, []string{"queueId"}},
		{"max-offset", GetMaxOffsetRequestHeader{"T", 2, false}.Encode, wrap(DecodeGetMaxOffsetRequestHeader), GetMaxOffsetRequestHeader{"T", 2, false}, []string{"topic", "queueId"}, nil},
		{"search-offset", SearchOffsetRequestHeader{"T", 2, 99, BoundaryUpper}.Encode, wrap(DecodeSearchOffsetRequestHeader),
			SearchOffsetRequestHeader{"T", 2, 99, BoundaryUpper}, []string{"topic", "queueId", "timestamp"}, []string{"timestamp"}},
		{"reset-offset", ResetOffsetRequestHeader{"G", "T", 2, 7, true, 99, true}.Encode, wrap(DecodeResetOffsetRequestHeader),
			ResetOffsetRequestHeader{"G", "T", 2, 7, true, 99, true}, []string{"group", "topic", "timestamp", "isForce"},
			[]string{"queueId", "offset", "timestamp"}},
		{"reset-offset-by-time", ResetOffsetRequestHeader{Group: "G", Topic: "T", QueueID: -1, Timestamp: -1}.Encode,
			wrap(DecodeResetOffsetRequestHeader), ResetOffsetRequestHeader{Group: "G", Topic: "T", QueueID: -1, Timestamp: -1}, nil, nil},
		{"query-offset", QueryConsumerOffsetRequestHeader{"G", "T", 1, false}.Encode, wrap(DecodeQueryConsumerOffsetRequestHeader),
			QueryConsumerOffsetRequestHeader{"G", "T", 1, false}, []string{"consumerGroup", "topic", "queueId"}, nil},
		{"update-offset", UpdateConsumerOffsetRequestHeader{"G", "T", 1, 77}.Encode, wrap(DecodeUpdateConsumerOffsetRequestHeader),
			UpdateConsumerOffsetRequestHeader{"G", "T", 1, 77}, []string{"consumerGroup", "topic", "queueId", "commitOffset"}, []string{"commitOffset"}},
		{"offset-response", OffsetResponseHeader{-5}.Encode, wrap(DecodeOffsetResponseHeader), OffsetResponseHeader{-5}, []string{"offset"}, []string{"offset"}},
		{"send-back", ConsumerSendMsgBackRequestHeader{Offset: 1048576, Group: "G", DelayLevel: -1, OriginMsgID: "m", OriginTopic: "T", UnitMode: true,
			MaxReconsumeTimes: 3, HasMaxReconsumeTimes: true, BrokerName: "b"}.Encode, wrap(DecodeConsumerSendMsgBackRequestHeader),
			ConsumerSendMsgBackRequestHeader{Offset: 1048576, Group: "G", DelayLevel: -1, OriginMsgID: "m", OriginTopic: "T", UnitMode: true,
				MaxReconsumeTimes: 3, HasMaxReconsumeTimes: true, BrokerName: "b"},
			[]string{"offset", "group", "delayLevel"}, []string{"maxReconsumeTimes"}},
		{"create-topic", CreateTopicRequestHeader{"T", "TBW102", 8, 8, 6, TopicFilterMultiTag, 1, true, "+a=b", true}.Encode,
			wrap(DecodeCreateTopicRequestHeader), CreateTopicRequestHeader{"T", "TBW102", 8, 8, 6, TopicFilterMultiTag, 1, true, "+a=b", true},
			[]string{"topic", "readQueueNums", "writeQueueNums", "perm"}, []string{"perm", "topicSysFlag"}},
		{"topic", TopicHeader{"T", true}.Encode, wrap(DecodeGetRouteInfoRequestHeader), TopicHeader{"T", true}, []string{"topic"}, nil},
		{"view-message", ViewMessageRequestHeader{1048576, "T"}.Encode, wrap(DecodeViewMessageRequestHeader), ViewMessageRequestHeader{1048576, "T"}, []string{"offset"}, []string{"offset"}},
		{"query-message", QueryMessageRequestHeader{"T", "k", 32, 5, 9, "T", "h@T@T@k@id@1", true}.Encode, wrap(DecodeQueryMessageRequestHeader),
			QueryMessageRequestHeader{"T", "k", 32, 5, 9, "T", "h@T@T@k@id@1", true}, []string{"topic", "key", "maxNum", "beginTimestamp", "endTimestamp"},
			[]string{"maxNum", "beginTimestamp", "endTimestamp"}},
		{"query-message-response", QueryMessageResponseHeader{7, 8}.Encode, wrap(DecodeQueryMessageResponseHeader), QueryMessageResponseHeader{7, 8},
			[]string{"indexLastUpdateTimestamp", "indexLastUpdatePhyoffset"}, []string{"indexLastUpdateTimestamp"}},
		{"view-broker-stats", ViewBrokerStatsDataRequestHeader{"TOPIC_PUT_NUMS", "T"}.Encode, wrap(DecodeViewBrokerStatsDataRequestHeader),
			ViewBrokerStatsDataRequestHeader{"TOPIC_PUT_NUMS", "T"}, []string{"statsName", "statsKey"}, nil},
	}
}

// TestHeaders round-trips every typed header through ext fields and a
// JSON and a ROCKETMQ frame, then checks that each required field, when
// missing, and each numeric field, when garbled, yields a *FieldError
// naming it.
func TestHeaders(t *testing.T) {
	for _, hc := range headerCases() {
		t.Run(hc.name, func(t *testing.T) {
			c := NewRequest(1, 1, nil, nil)
			hc.encode(c)
			for _, enc := range []func([]byte, *Command) []byte{AppendFrame, AppendFrameBinary} {
				d, err := DecodeFrame(enc(nil, c))
				if err != nil {
					t.Fatal(err)
				}
				got, err := hc.decode(d.ExtFields)
				if err != nil {
					t.Fatalf("decode: %v (ext %v)", err, d.ExtFields)
				}
				if !reflect.DeepEqual(got, hc.want) {
					t.Fatalf("round trip:\n got %+v\nwant %+v", got, hc.want)
				}
			}
			for _, k := range hc.required {
				m := maps.Clone(c.ExtFields)
				if _, ok := m[k]; !ok {
					t.Fatalf("encoder did not write required %q", k)
				}
				delete(m, k)
				checkFieldError(t, hc.decode, m, k, ErrMissingField)
			}
			for _, k := range hc.numeric {
				m := maps.Clone(c.ExtFields)
				m[k] = "12x"
				checkFieldError(t, hc.decode, m, k, ErrInvalidField)
			}
		})
	}
}

func checkFieldError(t *testing.T, dec func(map[string]string) (any, error), m map[string]string, key string, want error) {
	t.Helper()
	_, err := dec(m)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != key || !errors.Is(err, want) {
		t.Fatalf("field %q: got %v, want *FieldError for it wrapping %v", key, err, want)
	}
	if fe.Error() == "" {
		t.Fatal("empty error text")
	}
}

func TestHeaderLeniency(t *testing.T) {
	// POP without bornTime/pollTime/initMode (the proxy omits bornTime), Java-style booleans.
	h, err := DecodePopMessageRequestHeader(map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "0",
		"maxMsgNums": "32", "invisibleTime": "60000", "order": "True"})
	if err != nil || h.BornTime != 0 || h.PollTime != 0 || !h.Order {
		t.Fatalf("lenient POP decode: %+v %v", h, err)
	}
	// Java's Boolean.parseBoolean: anything but "true" (any case) is false.
	h, _ = DecodePopMessageRequestHeader(map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "0",
		"maxMsgNums": "32", "invisibleTime": "1", "order": "yes"})
	if h.Order {
		t.Fatal(`"yes" must read as false`)
	}
	// Defaults of optional booleans that Java treats as true when null.
	q, _ := DecodeQueryConsumerOffsetRequestHeader(map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "0"})
	m, _ := DecodeGetMaxOffsetRequestHeader(map[string]string{"topic": "T", "queueId": "0"})
	if !q.SetZeroIfNotFound || !m.Committed {
		t.Fatal("setZeroIfNotFound / committed must default to true")
	}
	// V2 send falls back to bname when n is absent; int32 overflow is invalid.
	s, err := DecodeSendMessageRequestHeaderV2(map[string]string{"a": "P", "b": "T", "e": "0", "f": "0", "g": "1", "h": "0", "bname": "x"})
	if err != nil || s.BrokerName != "x" {
		t.Fatalf("%+v %v", s, err)
	}
	checkFieldError(t, wrap(DecodeAckMessageRequestHeader), map[string]string{"consumerGroup": "G", "topic": "T",
		"queueId": "2147483648", "offset": "1", "extraInfo": "x"}, "queueId", ErrInvalidField)
	// A nil map (no extFields member at all) reports the first required field.
	checkFieldError(t, wrap(DecodeAckMessageRequestHeader), nil, "consumerGroup", ErrMissingField)
}

func TestResponseHeaderAlwaysWritesPrimitives(t *testing.T) {
	c := NewResponse(&Command{Opaque: 9}, PollingTimeout, "")
	PopMessageResponseHeader{EmptyInfo: true}.Encode(c)
	for _, k := range []string{"popTime", "invisibleTime", "reviveQid", "restNum", "startOffsetInfo", "msgOffsetInfo"} {
		if _, ok := c.ExtFields[k]; !ok {
			t.Errorf("POP response without %q", k)
		}
	}
	c = NewResponse(&Command{Opaque: 9}, Success, "")
	SendMessageResponseHeader{MsgID: "m"}.Encode(c)
	if c.ExtFields["TRACE_ON"] != "false" || c.ExtFields["MSG_REGION"] != DefaultMsgRegion || c.ExtFields["queueId"] != "0" {
		t.Fatalf("send response ext: %v", c.ExtFields)
	}
}
