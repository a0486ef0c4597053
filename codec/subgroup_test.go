package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// describeSubscriptionGroup lists c's fields one per line for the golden
// expect: sections.
func describeSubscriptionGroup(c SubscriptionGroupConfig) []string {
	p := c.GroupRetryPolicy
	out := []string{
		fmt.Sprintf("groupName %q consumeEnable %v consumeFromMinEnable %v consumeBroadcastEnable %v consumeMessageOrderly %v",
			c.GroupName, c.ConsumeEnable, c.ConsumeFromMinEnable, c.ConsumeBroadcastEnable, c.ConsumeMessageOrderly),
		fmt.Sprintf("retryQueueNums %d retryMaxTimes %d brokerId %d whichBrokerWhenConsumeSlowly %d notifyConsumerIdsChangedEnable %v groupSysFlag %d consumeTimeoutMinute %d",
			c.RetryQueueNums, c.RetryMaxTimes, c.BrokerID, c.WhichBrokerWhenConsumeSlowly, c.NotifyConsumerIDsChangedEnable, c.GroupSysFlag, c.ConsumeTimeoutMinute),
		fmt.Sprintf("groupRetryPolicy type %s exponential %+v customized %+v", p.Type, p.Exponential, p.Customized),
		fmt.Sprintf("subscriptionDataSet %+v (nil %v)", c.SubscriptionDataSet, c.SubscriptionDataSet == nil),
	}
	for _, k := range slices.Sorted(maps.Keys(c.Attributes)) {
		out = append(out, fmt.Sprintf("attribute %q = %q", k, c.Attributes[k]))
	}
	return out
}

func fullSubscriptionGroup() SubscriptionGroupConfig {
	c := NewSubscriptionGroupConfig("orders-consumer_1")
	c.ConsumeEnable, c.ConsumeFromMinEnable, c.ConsumeBroadcastEnable, c.ConsumeMessageOrderly = false, false, false, true
	c.RetryQueueNums, c.RetryMaxTimes, c.BrokerID, c.WhichBrokerWhenConsumeSlowly = 3, 5, 1, 2
	c.NotifyConsumerIDsChangedEnable, c.GroupSysFlag, c.ConsumeTimeoutMinute = false, 4, 30
	c.GroupRetryPolicy = GroupRetryPolicy{Type: GroupRetryPolicyExponential,
		Exponential: &ExponentialRetryPolicy{1000, 60000, 3}, Customized: &CustomizedRetryPolicy{[]int64{1000, 2000}}}
	c.SubscriptionDataSet = []SimpleSubscriptionData{{"TopicA", "TAG", "a || b", 1700000000000}}
	c.Attributes = map[string]string{"priority.factor": "10", "note": "q\"b\\s\n\t\b\f\ré\x01\x1f\x7f/<>\u2028😀"}
	return c
}

func TestSubscriptionGroupRoundTrip(t *testing.T) {
	enc := func(dst []byte, c SubscriptionGroupConfig) []byte { return AppendSubscriptionGroupConfig(dst, &c) }
	for _, c := range []SubscriptionGroupConfig{NewSubscriptionGroupConfig("G"), fullSubscriptionGroup()} {
		got := roundTrip(t, "subscription group", c, enc, DecodeSubscriptionGroupConfig)
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, c)
		}
		if b := enc(nil, c); !json.Valid(b) {
			t.Fatalf("invalid JSON %s", b)
		}
	}
	// The zero value encodes like Java with null groupName and empty maps.
	var z SubscriptionGroupConfig
	if got := string(AppendSubscriptionGroupConfig(nil, &z)); !strings.Contains(got, `"attributes":{}`) ||
		strings.Contains(got, "groupName") || !strings.Contains(got, `"groupRetryPolicy":{"type":"CUSTOMIZED"}`) {
		t.Fatalf("zero value: %s", got)
	}
	// An empty non-nil set stays [], nil stays absent.
	c := NewSubscriptionGroupConfig("G")
	c.SubscriptionDataSet = []SimpleSubscriptionData{}
	b := AppendSubscriptionGroupConfig(nil, &c)
	if got, err := DecodeSubscriptionGroupConfig(b); err != nil || got.SubscriptionDataSet == nil || !strings.Contains(string(b), `"subscriptionDataSet":[]`) {
		t.Fatalf("%s → %+v %v", b, got, err)
	}
}

func TestSubscriptionGroupClone(t *testing.T) {
	c := fullSubscriptionGroup()
	d := c.Clone()
	d.Attributes["x"] = "y"
	d.SubscriptionDataSet[0].Topic = "other"
	d.GroupRetryPolicy.Exponential.MaxMillis = 1
	d.GroupRetryPolicy.Customized.NextMillis[0] = 1
	if !reflect.DeepEqual(c, fullSubscriptionGroup()) {
		t.Fatal("Clone shares memory with the original")
	}
}

// TestSubscriptionGroupDecodeTolerance: what fastjson2 5.5 accepts (checked
// against rocketmq-remoting 5.5.1) decodes; nulls that would break the
// proxy become defaults.
func TestSubscriptionGroupDecodeTolerance(t *testing.T) {
	def := NewSubscriptionGroupConfig("X")
	for _, tc := range []struct {
		in   string
		want func(*SubscriptionGroupConfig)
	}{
		{`{"groupName":"X","unknown":[1,{"a":null}],"GroupName":"Y","retry_max_times":3}`, nil},
		{`{"groupName":"X","retryMaxTimes":2}`, func(c *SubscriptionGroupConfig) { c.RetryMaxTimes = 2 }},
		{`{"groupName":"X","consumeEnable":"false","retryMaxTimes":"7","brokerId":1.0}`, func(c *SubscriptionGroupConfig) {
			c.ConsumeEnable, c.RetryMaxTimes, c.BrokerID = false, 7, 1
		}},
		{`{"groupName":"X","consumeEnable":0,"consumeMessageOrderly":1,"retryMaxTimes":3.7}`, func(c *SubscriptionGroupConfig) {
			c.ConsumeEnable, c.ConsumeMessageOrderly, c.RetryMaxTimes = false, true, 3
		}},
		{`{"groupName":"X","attributes":null,"groupRetryPolicy":null,"subscriptionDataSet":null,"retryMaxTimes":null,"consumeEnable":""}`, nil},
		{`{"groupName":"X","groupRetryPolicy":{"type":"BOGUS"}}`, nil},
		{`{"groupName":"X","groupRetryPolicy":{"type":"EXPONENTIAL","exponentialRetryPolicy":{"max":9},"customizedRetryPolicy":{}}}`,
			func(c *SubscriptionGroupConfig) {
				c.GroupRetryPolicy = GroupRetryPolicy{Type: GroupRetryPolicyExponential,
					Exponential: &ExponentialRetryPolicy{DefaultExponentialInitialMillis, 9, DefaultExponentialMultiplier},
					Customized:  &CustomizedRetryPolicy{DefaultCustomizedRetryNextMillis()}}
			}},
		{`{"groupName":"X","attributes":{"+priority.factor":50,"a":null},"subscriptionDataSet":[null,{"topic":"T","version":"5"}]}`,
			func(c *SubscriptionGroupConfig) {
				c.Attributes = map[string]string{"+priority.factor": "50", "a": ""}
				c.SubscriptionDataSet = []SimpleSubscriptionData{{Topic: "T", Version: 5}}
			}},
		{` {"groupName" : "X"} `, nil},
	} {
		got, err := DecodeSubscriptionGroupConfig([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		want := def.Clone()
		if tc.want != nil {
			tc.want(&want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", tc.in, got, want)
		}
	}
	for _, in := range []string{``, `null`, `[]`, `"x"`, `{`, `{"groupName":"X"}x`, `{"retryMaxTimes":"x"}`,
		`{"retryMaxTimes":2147483648}`, `{"consumeEnable":"maybe"}`, `{"groupName":{}}`, `{"attributes":[]}`,
		`{"attributes":{"a":{}}}`, `{"subscriptionDataSet":{}}`, `{"subscriptionDataSet":[1]}`,
		`{"groupRetryPolicy":{"customizedRetryPolicy":{"next":["a"]}}}`, `{"groupRetryPolicy":{"exponentialRetryPolicy":{"max":1e30}}}`} {
		if _, err := DecodeSubscriptionGroupConfig([]byte(in)); !errors.Is(err, ErrInvalidField) {
			t.Fatalf("%q: want ErrInvalidField, got %v", in, err)
		}
	}
}

func TestSubscriptionGroupWrapper(t *testing.T) {
	w := SubscriptionGroupWrapper{
		SubscriptionGroupTable: map[string]SubscriptionGroupConfig{"G": NewSubscriptionGroupConfig("G"), "A": fullSubscriptionGroup()},
		ForbiddenTable:         map[string]map[string]int32{"G": {"T": 2}},
		DataVersion:            DataVersion{Counter: 7, Timestamp: 1700000000123},
	}
	enc := func(dst []byte, w SubscriptionGroupWrapper) []byte { return AppendSubscriptionGroupWrapper(dst, &w) }
	if got := roundTrip(t, "wrapper", w, enc, DecodeSubscriptionGroupWrapper); !reflect.DeepEqual(got, w) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, w)
	}
	empty := string(AppendSubscriptionGroupWrapper(nil, &SubscriptionGroupWrapper{}))
	if empty != `{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":0},"forbiddenTable":{},"subscriptionGroupTable":{}}` {
		t.Fatal(empty)
	}
	if _, err := DecodeSubscriptionGroupWrapper([]byte(`{"subscriptionGroupTable":{"G":{"retryMaxTimes":"x"}}}`)); !errors.Is(err, ErrInvalidField) {
		t.Fatalf("bad table value: %v", err)
	}
}

func TestSubscriptionGroupHeaders(t *testing.T) {
	all := GetAllSubscriptionGroupRequestHeader{GroupSeq: 2, HasGroupSeq: true, MaxGroupNum: 2000, HasMaxGroupNum: true,
		DataVersion: `{"counter":1,"stateVersion":0,"timestamp":5}`}
	for _, hc := range []headerCase{
		{"get-subgroup", GroupHeader{"G"}.Encode, wrap(DecodeGetSubscriptionGroupConfigRequestHeader), GroupHeader{"G"}, []string{"group"}, nil},
		{"delete-subgroup", DeleteSubscriptionGroupRequestHeader{"G", true}.Encode, wrap(DecodeDeleteSubscriptionGroupRequestHeader),
			DeleteSubscriptionGroupRequestHeader{"G", true}, []string{"groupName"}, nil},
		{"get-all-subgroup", all.Encode, wrap(DecodeGetAllSubscriptionGroupRequestHeader), all, nil, []string{"groupSeq", "maxGroupNum"}},
		{"get-all-subgroup-response", GetAllSubscriptionGroupResponseHeader{3}.Encode, wrap(DecodeGetAllSubscriptionGroupResponseHeader),
			GetAllSubscriptionGroupResponseHeader{3}, []string{"totalGroupNum"}, []string{"totalGroupNum"}},
	} {
		t.Run(hc.name, func(t *testing.T) {
			c := NewRequest(RequestGetSubscriptionGroupConfig, 1, nil, nil)
			hc.encode(c)
			for _, enc := range []func([]byte, *Command) []byte{AppendFrame, AppendFrameBinary} {
				d, err := DecodeFrame(enc(nil, c))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := hc.decode(d.ExtFields); err != nil || !reflect.DeepEqual(got, hc.want) {
					t.Fatalf("round trip: %+v %v, want %+v", got, err, hc.want)
				}
			}
			for _, k := range hc.required {
				m := maps.Clone(c.ExtFields)
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
	// Clients before paging send no header; cleanOffset defaults to false.
	if h, err := DecodeGetAllSubscriptionGroupRequestHeader(nil); err != nil || h != (GetAllSubscriptionGroupRequestHeader{}) {
		t.Fatalf("%+v %v", h, err)
	}
	if h, err := DecodeDeleteSubscriptionGroupRequestHeader(map[string]string{"groupName": "G"}); err != nil || h.CleanOffset {
		t.Fatalf("%+v %v", h, err)
	}
	for code, name := range map[int32]string{200: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", 201: "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
		207: "DELETE_SUBSCRIPTIONGROUP", 352: "GET_SUBSCRIPTIONGROUP_CONFIG"} {
		if RequestName(code) != name {
			t.Fatalf("RequestName(%d) = %s", code, RequestName(code))
		}
	}
}

func TestApplySubscriptionGroupAttributes(t *testing.T) {
	got, err := ApplySubscriptionGroupAttributes(nil, map[string]string{"+priority.factor": "50", "+lite.sub.model": "Exclusive"}, true)
	if err != nil || !reflect.DeepEqual(got, map[string]string{"priority.factor": "50", "lite.sub.model": "Exclusive"}) {
		t.Fatalf("create: %v %v", got, err)
	}
	cur := map[string]string{"priority.factor": "50", "lite.bind.topic": "T"}
	got, err = ApplySubscriptionGroupAttributes(cur, map[string]string{"+priority.factor": "0", "-lite.bind.topic": "",
		"+lite.sub.reset.offset.exclusive": "TRUE"}, false)
	if err != nil || !reflect.DeepEqual(got, map[string]string{"priority.factor": "0", "lite.sub.reset.offset.exclusive": "TRUE"}) {
		t.Fatalf("update: %v %v", got, err)
	}
	if cur["lite.bind.topic"] != "T" {
		t.Fatal("current was modified")
	}
	if got, err := ApplySubscriptionGroupAttributes(cur, nil, false); err != nil || !reflect.DeepEqual(got, cur) {
		t.Fatalf("no ops: %v %v", got, err)
	}
	for _, tc := range []struct {
		cur    map[string]string
		ops    map[string]string
		create bool
	}{
		{nil, map[string]string{"-priority.factor": ""}, true},
		{nil, map[string]string{"priority.factor": "1"}, false},
		{nil, map[string]string{"+": "1"}, false},
		{nil, map[string]string{"": "1"}, false},
		{nil, map[string]string{"+a-b": "1"}, false},
		{nil, map[string]string{"+unknown.key": "1"}, true},
		{nil, map[string]string{"+priority.factor": "101"}, true},
		{nil, map[string]string{"+priority.factor": "x"}, true},
		{nil, map[string]string{"+lite.sub.model": "shared"}, true},
		{nil, map[string]string{"+lite.sub.reset.offset.exclusive": "yes"}, true},
		{nil, map[string]string{"+lite.sub.client.max.event.cnt": "9"}, true},
		{map[string]string{}, map[string]string{"-priority.factor": ""}, false},
		{cur, map[string]string{"+priority.factor": "1", "-priority.factor": ""}, false},
	} {
		if _, err := ApplySubscriptionGroupAttributes(tc.cur, tc.ops, tc.create); !errors.Is(err, ErrBadAttribute) {
			t.Fatalf("%v %v %v: want ErrBadAttribute, got %v", tc.cur, tc.ops, tc.create, err)
		}
	}
}

// FuzzDecodeSubscriptionGroupConfig: the decoder never panics, and
// whatever it accepts re-encodes to valid JSON that decodes to the same
// value (encode∘decode is a fixed point after one pass).
func FuzzDecodeSubscriptionGroupConfig(f *testing.F) {
	full := fullSubscriptionGroup()
	def := NewSubscriptionGroupConfig("G")
	f.Add(AppendSubscriptionGroupConfig(nil, &full))
	f.Add(AppendSubscriptionGroupConfig(nil, &def))
	f.Add([]byte(`{"groupName":"X","consumeEnable":"false","retryMaxTimes":3.7,"attributes":{"+a":1},"subscriptionDataSet":[null]}`))
	f.Add([]byte(`{"dataVersion":{"counter":1},"forbiddenTable":{"G":{"T":1}},"subscriptionGroupTable":{"G":{}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if w, err := DecodeSubscriptionGroupWrapper(b); err == nil {
			enc := AppendSubscriptionGroupWrapper(nil, &w)
			w2, err := DecodeSubscriptionGroupWrapper(enc)
			if err != nil || !json.Valid(enc) || !bytesEqual(enc, AppendSubscriptionGroupWrapper(nil, &w2)) {
				t.Fatalf("wrapper re-encoding unstable: %v\n%s", err, enc)
			}
		}
		c, err := DecodeSubscriptionGroupConfig(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidField) {
				t.Fatalf("error %v does not wrap ErrInvalidField", err)
			}
			return
		}
		enc := AppendSubscriptionGroupConfig(nil, &c)
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON %q", enc)
		}
		c2, err := DecodeSubscriptionGroupConfig(enc)
		if err != nil {
			t.Fatalf("re-decode %q: %v", enc, err)
		}
		if enc2 := AppendSubscriptionGroupConfig(nil, &c2); !bytesEqual(enc, enc2) {
			t.Fatalf("not a fixed point:\n%s\n%s", enc, enc2)
		}
	})
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }
