package codec

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestExtraInfo(t *testing.T) {
	e, err := ParseExtraInfo("40 1700000000000 60000 3 0 broker-a 1 42")
	want := ExtraInfo{CkQueueOffset: 40, PopTime: 1700000000000, InvisibleTime: 60000, ReviveQid: 3, BrokerName: "broker-a", QueueID: 1, QueueOffset: 42}
	if err != nil || e != want {
		t.Fatalf("%+v %v", e, err)
	}
	if e.String() != "40 1700000000000 60000 3 0 broker-a 1 42" || e.CheckBroker("broker-a") != nil {
		t.Fatal("String / CheckBroker")
	}
	if err := e.CheckBroker("broker-b"); !errors.Is(err, ErrForeignReceipt) {
		t.Fatalf("foreign broker: %v", err)
	}
	// The proxy's 9-field handle, retry flags and orderly reviveQid.
	e9, err := ParseExtraInfo("7 1 2 999 2 b 0 7 1048576")
	if err != nil || !e9.HasCommitLogOffset || e9.CommitLogOffset != 1048576 || !e9.IsOrder() || e9.RetryFlag != RetryFlagV2 {
		t.Fatalf("%+v %v", e9, err)
	}
	if e9.String() != "7 1 2 999 2 b 0 7 1048576" || e9.RealTopic("T", "G") != "%RETRY%G+T" {
		t.Fatal("9-field round trip / real topic")
	}
	// docs/SCENARIOS.md ACK-08: every malformed handle is a clear error.
	for _, bad := range []string{"", "1 2 3", "x 1 2 3 0 b 1 2", "1 x 2 3 0 b 1 2", "1 2 3 4 5 b 1 2", "1 2 3 4 0  1 2",
		"1 2 3 4 0 b 1 2 3 4", "1 2 3 4 0 b 1", "1 2 3 4 0 b 1 2 ", " 1 2 3 4 0 b 1 2", "1 2 3 99999999999 0 b 1 2", "1 2 3 4 0 b 1 2 x"} {
		if _, err := ParseExtraInfo(bad); !errors.Is(err, ErrBadExtraInfo) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	_, err = ParseExtraInfo("1 oops 3 4 0 b 1 2")
	if err == nil || !strings.Contains(err.Error(), "popTime") {
		t.Fatalf("error must name the field: %v", err)
	}
}

func TestOffsetInfo(t *testing.T) {
	var so, mo, oc []byte
	so = AppendStartOffsetInfo(so, RetryFlagNormal, 1, 40)
	so = AppendStartOffsetInfo(so, RetryFlagV1, 0, 7)
	mo = AppendMsgOffsetInfo(mo, RetryFlagNormal, 1, []int64{40, 41, 42})
	mo = AppendMsgOffsetInfo(mo, RetryFlagV1, 0, []int64{7})
	oc = AppendOrderCountInfoOffset(oc, RetryFlagNormal, 1, 40, 2)
	oc = AppendOrderCountInfo(oc, RetryFlagNormal, 1, 2)
	if string(so) != "0 1 40;1 0 7" || string(mo) != "0 1 40,41,42;1 0 7" || string(oc) != "0 qo1%40 2;0 1 2" {
		t.Fatalf("%q %q %q", so, mo, oc)
	}
	s, err := ParseStartOffsetInfo(string(so))
	if err != nil || !reflect.DeepEqual(s, map[QueueKey]int64{{0, 1}: 40, {1, 0}: 7}) {
		t.Fatalf("%v %v", s, err)
	}
	m, err := ParseMsgOffsetInfo(string(mo))
	if err != nil || !reflect.DeepEqual(m, map[QueueKey][]int64{{0, 1}: {40, 41, 42}, {1, 0}: {7}}) {
		t.Fatalf("%v %v", m, err)
	}
	o, err := ParseOrderCountInfo(string(oc))
	if err != nil || !reflect.DeepEqual(o, map[OrderCountKey]int32{{0, 1, 40, true}: 2, {Flag: 0, QueueID: 1}: 2}) {
		t.Fatalf("%v %v", o, err)
	}
	for _, bad := range []string{"0 1", "0 1 2 3", "3 1 2", "0 1 x", "0 1 2;0 1 3", ";", "0 1 40,", "0  1"} {
		_, e1 := ParseStartOffsetInfo(bad)
		_, e2 := ParseMsgOffsetInfo(bad)
		if !errors.Is(e1, ErrInvalidField) || !errors.Is(e2, ErrInvalidField) {
			t.Errorf("%q: %v / %v", bad, e1, e2)
		}
	}
}

func TestTopicNames(t *testing.T) {
	if RetryGroupTopic("G") != "%RETRY%G" || DLQTopic("G") != "%DLQ%G" || PopRetryTopicV1("G", "T") != "%RETRY%G_T" ||
		PopRetryTopicV2("G", "T") != "%RETRY%G+T" || ReviveLogTopic("C") != "rmq_sys_REVIVE_LOG_C" {
		t.Fatal("names")
	}
	for topic, flag := range map[string]RetryFlag{"T": 0, "%RETRY%G": 1, "%RETRY%G_T": 1, "%RETRY%G+T": 2, "%DLQ%G": 0} {
		if RetryFlagOfTopic(topic) != flag {
			t.Errorf("flag of %s", topic)
		}
	}
	for _, f := range []RetryFlag{0, 1, 2} {
		real := RealTopic("T", "G", f)
		if RetryFlagOfTopic(real) != f {
			t.Errorf("RealTopic(%d) = %s", f, real)
		}
		if f != 0 {
			if topic, flag, ok := ParsePopRetryTopic(real, "G"); !ok || topic != "T" || flag != f {
				t.Errorf("parse %s: %s %d %v", real, topic, flag, ok)
			}
		}
	}
	// docs/SCENARIOS.md RET-07: a group that is a prefix of another never matches.
	if _, _, ok := ParsePopRetryTopic("%RETRY%g10+T", "g1"); ok {
		t.Fatal("g1 matched g10's retry topic")
	}
	if topic, _, ok := ParsePopRetryTopic("%RETRY%g1+T", "g1"); !ok || topic != "T" {
		t.Fatal("g1's own retry topic")
	}
	// RET-01: V2 names are unambiguous even with '_' in both parts.
	for _, c := range [][2]string{{"g_a", "t"}, {"g", "a_t"}} {
		g, tp, ok := ParsePopRetryTopicV2(PopRetryTopicV2(c[0], c[1]))
		if !ok || g != c[0] || tp != c[1] {
			t.Errorf("V2 parse of %v: %s %s", c, g, tp)
		}
	}
	for _, bad := range []string{"%RETRY%G", "%RETRY%+T", "%RETRY%G+", "T"} {
		if _, _, ok := ParsePopRetryTopicV2(bad); ok {
			t.Errorf("V2 parse accepted %q", bad)
		}
	}
	if ValidateTopic("Topic-A_1|%") != nil || ValidateTopic("") == nil || ValidateTopic("a b") == nil ||
		ValidateTopic(strings.Repeat("a", 128)) == nil || ValidateTopic("%RETRY%"+strings.Repeat("a", 200)) != nil ||
		ValidateGroup(strings.Repeat("g", 121)) == nil || ValidateGroup("G") != nil || !errors.Is(ValidateGroup("g+"), ErrBadName) {
		t.Fatal("validation")
	}
}

func TestCodeTables(t *testing.T) {
	if RequestName(RequestPopMessage) != "POP_MESSAGE" || RequestName(123456) != "UNKNOWN_123456" {
		t.Fatal("request names")
	}
	if len(RequestCodes()) != len(requestNames)+len(javaOnlyRequestNames) {
		t.Fatal("RequestCodes")
	}
	seen := map[int32]bool{}
	prev := int32(-1)
	for _, e := range ResponseCodes() {
		if seen[e.Code] || e.Code <= prev || e.Name == "" {
			t.Fatalf("response table entry %+v duplicated or out of order", e)
		}
		seen[e.Code], prev = true, e.Code
	}
	if e, ok := LookupResponseCode(SystemBusy); !ok || !e.Retriable || e.Name != "SYSTEM_BUSY" {
		t.Fatal("SYSTEM_BUSY")
	}
	err := ResponseErr(&Command{Code: NoMessage, Remark: "offset 5"})
	var re *ResponseError
	if !errors.As(err, &re) || re.Retriable() || !strings.Contains(err.Error(), "NO_MESSAGE") || ResponseErr(&Command{}) != nil {
		t.Fatalf("ResponseErr: %v", err)
	}
}

// A long garbage handle is quoted only in part in the error.
func TestParseExtraInfoQuotesLongInputShort(t *testing.T) {
	long := strings.Repeat("x ", 50_000)
	_, err := ParseExtraInfo(long)
	if err == nil {
		t.Fatal("garbage parsed")
	}
	if msg := err.Error(); len(msg) > 400 || !strings.Contains(msg, "…(100000 bytes)") {
		t.Fatalf("error %d bytes: %.200s", len(msg), msg)
	}
	_, err = ParseExtraInfo("0 1 2 x")
	if err == nil || !strings.Contains(err.Error(), `"0 1 2 x"`) {
		t.Fatalf("short input not quoted whole: %v", err)
	}
}

// The refusal names the offending character whole: a non-ASCII name shows
// its first character, not the lead byte of its UTF-8 encoding, and a byte
// that starts no valid sequence shows as a \x escape.
func TestNameErrorQuotesWholeCharacter(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{ValidateTopic("主题"), `illegal character '主' at 0`},
		{ValidateGroup("g组"), `illegal character '组' at 1`},
		{ValidateTopic("a\xffb"), `illegal character '\xff' at 1`},
		{ValidateTopic("a b"), `illegal character ' ' at 1`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want it to contain %s", tc.err, tc.want)
		}
	}
}
