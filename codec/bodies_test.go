package codec

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestBatchBody(t *testing.T) {
	msgs := []Message{{Flag: 1, Body: []byte("m1"), Properties: "UNIQ_KEY\x01ID1\x02"}, {Body: nil}, {Flag: -1, Body: []byte(strings.Repeat("x", 70000))}}
	var b []byte
	for i := range msgs {
		var err error
		if b, err = AppendBatchEntry(b, &msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := DecodeBatchBody(b)
	if err != nil || !reflect.DeepEqual(got, msgs) {
		t.Fatalf("%v", err)
	}
	un, err := UnsafeDecodeBatchBody(b)
	if err != nil || len(un) != 3 || string(un[0].Body) != "m1" || un[0].Properties != msgs[0].Properties {
		t.Fatalf("unsafe: %v", err)
	}
	for _, bad := range [][]byte{b[:len(b)-1], b[:3], append(append([]byte(nil), b...), 0, 0, 0, 30)} {
		if _, err := DecodeBatchBody(bad); !errors.Is(err, ErrBadMessage) {
			t.Errorf("bad batch: %v", err)
		}
	}
	if out, _ := DecodeBatchBody(nil); len(out) != 0 {
		t.Fatal("empty body")
	}
}

func TestBatchAckBody(t *testing.T) {
	a := BatchAck{ConsumerGroup: "G", Topic: "T", RetryFlag: RetryFlagV2, StartOffset: 100, QueueID: 0, ReviveQueueID: 3, PopTime: 5, InvisibleTime: 10000}
	if err := a.SetAcked(100, 102, 104, 106, 108, 110); err != nil {
		t.Fatal(err)
	}
	if string(AppendBatchAckBody(nil, &BatchAckBody{Acks: []BatchAck{a}})[:13]) != `{"acks":[{"b"` {
		t.Fatal("member order")
	}
	body := BatchAckBody{BrokerName: "b", Acks: []BatchAck{a}}
	got := roundTrip(t, "batch ack", &body, AppendBatchAckBody, func(b []byte) (*BatchAckBody, error) {
		v, err := DecodeBatchAckBody(b)
		return &v, err
	})
	// docs/SCENARIOS.md BAT-01: "VQU=" = 0x55,0x05 = bits 0,2,4,6,8,10.
	if !strings.Contains(string(AppendBatchAckBody(nil, got)), `"b":"VQU="`) || !reflect.DeepEqual(got.Acks[0].AckedOffsets(64), []int64{100, 102, 104, 106, 108, 110}) {
		t.Fatalf("bitset: %+v", got.Acks[0])
	}
	if !reflect.DeepEqual(got.Acks[0].AckedOffsets(5), []int64{100, 102, 104}) {
		t.Fatal("maxBits bound")
	}
	if err := a.SetAcked(99); err == nil {
		t.Fatal("offset before startOffset")
	}
	// Long names, numeric retry flag, trailing zero bytes, unknown members.
	long := `{"brokerName":"b","x":[1],"acks":[{"consumerGroup":"G","topic":"T","retry":1,"startOffset":7,"queueId":2,` +
		`"reviveQueueId":4,"popTime":9,"invisibleTime":8,"bitSet":"AQAA","extra":{}}]}`
	v, err := DecodeBatchAckBody([]byte(long))
	if err != nil || v.Acks[0].RetryFlag != RetryFlagV1 || v.Acks[0].QueueID != 2 || !reflect.DeepEqual(v.Acks[0].AckedOffsets(64), []int64{7}) {
		t.Fatalf("long form: %+v %v", v, err)
	}
	if v, err := DecodeBatchAckBody([]byte(`{"acks":[],"brokerName":"b"}`)); err != nil || len(v.Acks) != 0 {
		t.Fatal("empty acks")
	}
	for _, bad := range []string{`{"acks":[{"c":"G"}]}`, `{"acks":[{"c":"G","t":"T","r":"7","so":1,"q":1,"rq":1,"pt":1,"it":1}]}`,
		`{"acks":[{"c":"G","t":"T","r":"0","so":1,"q":1,"rq":1,"pt":1,"it":1,"b":"!!"}]}`, `{`} {
		if _, err := DecodeBatchAckBody([]byte(bad)); !errors.Is(err, ErrInvalidField) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestRouteAndCluster(t *testing.T) {
	r := TopicRouteData{
		BrokerDatas: []BrokerData{{BrokerAddrs: map[int64]string{1: "10.0.0.2:10911", 0: "[::1]:10911"}, BrokerName: "b", Cluster: "C", ZoneName: "z"}},
		QueueDatas:  []QueueData{{BrokerName: "b", Perm: PermRead | PermWrite, ReadQueueNums: 8, WriteQueueNums: 8}},
	}
	std := string(AppendTopicRouteData(nil, &r, false))
	if !strings.Contains(std, `"brokerAddrs":{"0":"[::1]:10911","1":"10.0.0.2:10911"}`) || strings.ContainsAny(std, " \n") {
		t.Fatalf("standard route: %s", std)
	}
	for _, legacy := range []bool{false, true} {
		got := roundTrip(t, "route", &r, func(b []byte, v *TopicRouteData) []byte { return AppendTopicRouteData(b, v, legacy) },
			func(b []byte) (*TopicRouteData, error) { v, err := DecodeTopicRouteData(b); return &v, err })
		if !reflect.DeepEqual(got, &r) {
			t.Fatalf("route: %+v", got)
		}
	}
	// Legacy keys with whitespace and negative ids; strings holding ",0:" are left alone.
	v, err := DecodeTopicRouteData([]byte(`{"brokerDatas":[{"brokerAddrs":{ 0 : "a,1:b", -1:"c"},"brokerName":"x"}]}`))
	if err != nil || v.BrokerDatas[0].BrokerAddrs[0] != "a,1:b" || v.BrokerDatas[0].BrokerAddrs[-1] != "c" {
		t.Fatalf("legacy parse: %+v %v", v, err)
	}
	ci := ClusterInfo{BrokerAddrTable: map[string]BrokerData{"b": r.BrokerDatas[0]}, ClusterAddrTable: map[string][]string{"C": {"b"}}}
	for _, legacy := range []bool{false, true} {
		got, err := DecodeClusterInfo(AppendClusterInfo(nil, &ci, legacy))
		if err != nil || !reflect.DeepEqual(got, ci) {
			t.Fatalf("cluster info: %+v %v", got, err)
		}
	}
}

func TestHeartbeatAndSmallBodies(t *testing.T) {
	java := `{"clientID":"10.0.0.5@4711#1","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_POP",` +
		`"groupName":"G","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[2598919],"expressionType":"TAG",` +
		`"subString":"TagA","subVersion":1700000000000,"tagsSet":["TagA"],"topic":"T"}],"unitMode":false}],"heartbeatFingerprint":7,` +
		`"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}],"withoutSub":false}`
	goShape := `{"clientID":"10.0.0.6@12345","producerDataSet":[],"consumerDataSet":[{"groupName":"G","consumeType":"CONSUME_PASSIVELY",` +
		`"messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,` +
		`"topic":"T","subString":"TagA","tagsSet":["TagA"],"codeSet":["2598919"],"subVersion":1,"expressionType":"TAG"}],"unitMode":false}]}`
	for _, s := range []string{java, goShape} {
		h, err := DecodeHeartbeatData([]byte(s))
		if err != nil || len(h.ConsumerDataSet) != 1 || h.ConsumerDataSet[0].GroupName != "G" ||
			!reflect.DeepEqual(h.ConsumerDataSet[0].SubscriptionDataSet[0].CodeSet, CodeSet{TagHashCode("TagA")}) {
			t.Fatalf("%s: %+v %v", s, h, err)
		}
		if again, err := DecodeHeartbeatData(EncodeHeartbeatData(&h)); err != nil || !reflect.DeepEqual(again, h) {
			t.Fatal("heartbeat round trip")
		}
	}
	if TagHashCode("TagA") != 2598919 || TagHashCode("😀") != 1772899 || TagHashCode("") != 0 {
		t.Fatal("String.hashCode")
	}
	if _, err := DecodeHeartbeatData([]byte(`{"consumerDataSet":[{"subscriptionDataSet":[{"codeSet":["x"]}]}]}`)); !errors.Is(err, ErrInvalidField) {
		t.Fatal("bad codeSet")
	}
	if string(EncodeConsumerListBody(nil)) != `{"consumerIdList":[]}` {
		t.Fatal("consumer list")
	}
	if v, _ := DecodeConsumerListBody(EncodeConsumerListBody([]string{"a", "b"})); len(v.ConsumerIDList) != 2 {
		t.Fatal("consumer list decode")
	}
	qa := QueryAssignmentResponseBody{MessageQueueAssignments: []MessageQueueAssignment{{MessageQueue: MessageQueue{"b", -1, "T"}, Mode: MessageRequestModePop}}}
	if s := string(EncodeQueryAssignmentResponseBody(&qa)); s != `{"messageQueueAssignments":[{"messageQueue":{"brokerName":"b","queueId":-1,"topic":"T"},"mode":"POP"}]}` {
		t.Fatalf("assignment: %s", s)
	}
	if s := string(EncodeQueryAssignmentResponseBody(&QueryAssignmentResponseBody{})); s != `{"messageQueueAssignments":null}` {
		t.Fatalf("keep-current assignment: %s", s)
	}
	req, err := DecodeQueryAssignmentRequestBody([]byte(`{"clientId":"c","consumerGroup":"G","messageModel":"CLUSTERING","strategyName":"AVG","topic":"T"}`))
	if err != nil || req.StrategyName != "AVG" || req.Topic != "T" {
		t.Fatal("assignment request")
	}
	mode, err := DecodeSetMessageRequestModeRequestBody([]byte(`{"consumerGroup":"G","mode":"POP","popShareQueueNum":0,"topic":"T"}`))
	if err != nil || mode.Mode != "POP" {
		t.Fatal("set mode")
	}
	if s := string(EncodeKVTable(map[string]string{"b": "2", "a": "1"})); s != `{"table":{"a":"1","b":"2"}}` {
		t.Fatalf("kv: %s", s)
	}
	tc := TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}
	if s := string(EncodeTopicConfig(&tc)); s != `{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}` {
		t.Fatalf("topic config: %s", s)
	}
	if v, err := DecodeTopicConfig(EncodeTopicConfig(&tc)); err != nil || v.TopicName != "T" {
		t.Fatal("topic config decode")
	}
	w := TopicConfigWrapper{TopicConfigTable: map[string]TopicConfig{"T": tc}}
	if v, err := DecodeTopicConfigWrapper(EncodeTopicConfigWrapper(&w)); err != nil || v.TopicConfigTable["T"].Perm != 6 {
		t.Fatal("wrapper")
	}
	lb, err := DecodeLockBatchRequestBody([]byte(`{"clientId":"c","consumerGroup":"G","mqSet":[{"brokerName":"b","queueId":0,"topic":"T"}],"onlyThisBroker":false}`))
	if err != nil || len(lb.MQSet) != 1 || string(EncodeLockBatchResponseBody(nil)) != `{"lockOKMQSet":[]}` {
		t.Fatal("lock batch")
	}
}
