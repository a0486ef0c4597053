package grpcserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/codec"
)

func TestCodeOfTable(t *testing.T) {
	cases := []struct {
		op   Op
		code int32
		want v2.Code
	}{
		{OpGeneric, codec.Success, v2.Code_OK},
		{OpAck, codec.Success, v2.Code_OK},
		{OpGeneric, codec.SystemBusy, v2.Code_TOO_MANY_REQUESTS},
		{OpGeneric, codec.RequestCodeNotSupported, v2.Code_NOT_IMPLEMENTED},
		{OpGeneric, codec.SubscriptionGroupNotExist, v2.Code_CONSUMER_GROUP_NOT_FOUND},
		{OpSend, codec.FlushDiskTimeout, v2.Code_MASTER_PERSISTENCE_TIMEOUT},
		{OpSend, codec.SlaveNotAvailable, v2.Code_HA_NOT_AVAILABLE},
		{OpSend, codec.FlushSlaveTimeout, v2.Code_SLAVE_PERSISTENCE_TIMEOUT},
		{OpSend, codec.TopicNotExist, v2.Code_TOPIC_NOT_FOUND},
		{OpSend, codec.NoPermission, v2.Code_FORBIDDEN},
		{OpSend, codec.MessageIllegal, v2.Code_BAD_REQUEST},
		{OpSend, codec.ServiceNotAvailable, v2.Code_INTERNAL_SERVER_ERROR},
		{OpSend, codec.PullNotFound, v2.Code_INTERNAL_SERVER_ERROR},
		{OpReceive, codec.PullNotFound, v2.Code_MESSAGE_NOT_FOUND},
		{OpReceive, codec.PollingTimeout, v2.Code_MESSAGE_NOT_FOUND},
		{OpReceive, codec.PullRetryImmediately, v2.Code_MESSAGE_NOT_FOUND},
		{OpReceive, codec.PollingFull, v2.Code_TOO_MANY_REQUESTS},
		{OpReceive, codec.TopicNotExist, v2.Code_TOPIC_NOT_FOUND},
		{OpReceive, codec.NoPermission, v2.Code_FORBIDDEN},
		{OpAck, codec.NoMessage, v2.Code_INTERNAL_SERVER_ERROR},
		{OpAck, codec.MessageIllegal, v2.Code_INTERNAL_SERVER_ERROR},
		{OpAck, codec.SystemBusy, v2.Code_TOO_MANY_REQUESTS},
		{OpChangeInvisible, codec.TopicNotExist, v2.Code_INTERNAL_SERVER_ERROR},
		{OpForwardDLQ, codec.SystemError, v2.Code_INTERNAL_SERVER_ERROR},
		{OpGeneric, 12345, v2.Code_INTERNAL_SERVER_ERROR},
	}
	for _, c := range cases {
		if got := CodeOf(c.op, c.code); got != c.want {
			t.Errorf("CodeOf(%d, %s) = %s, want %s", c.op, codec.ResponseName(c.code), got, c.want)
		}
	}
}

// Every row names a known remoting code and a v2 code the generated enum
// knows, and a row that differs from the proxy says why.
func TestStatusTableRows(t *testing.T) {
	seen := map[int32]bool{}
	for _, r := range StatusTable() {
		if _, ok := codec.LookupResponseCode(r.Remoting); !ok {
			t.Errorf("row %d: unknown remoting code", r.Remoting)
		}
		if seen[r.Remoting] {
			t.Errorf("row %d twice", r.Remoting)
		}
		seen[r.Remoting] = true
		if _, ok := v2.Code_name[int32(r.Code)]; !ok {
			t.Errorf("row %d: v2 code %d not in the enum", r.Remoting, r.Code)
		}
		if r.Code != r.Proxy && r.Why == "" {
			t.Errorf("row %s differs from the proxy (%s vs %s) without a reason", codec.ResponseName(r.Remoting), r.Code, r.Proxy)
		}
	}
}

func TestStatusOfMessages(t *testing.T) {
	s := StatusOf(OpReceive, codec.PollingTimeout, "")
	if s.Code != v2.Code_MESSAGE_NOT_FOUND || s.Message != "no new message" {
		t.Fatalf("receive timeout: %v", s)
	}
	s = StatusOf(OpReceive, codec.PollingFull, "too many")
	if s.Code != v2.Code_TOO_MANY_REQUESTS || s.Message != "polling full" {
		t.Fatalf("polling full: %v", s)
	}
	s = StatusOf(OpAck, codec.NoMessage, "offset 9 out of range")
	if s.Code != v2.Code_INTERNAL_SERVER_ERROR || s.Message != "ack failed: status is abnormal (NO_MESSAGE: offset 9 out of range)" {
		t.Fatalf("ack: %v", s)
	}
	s = StatusOf(OpSend, codec.TopicNotExist, "")
	if s.Message != "TOPIC_NOT_EXIST" {
		t.Fatalf("no remark: %v", s)
	}
	s = StatusOf(OpSend, codec.Success, "whatever")
	if s.Code != v2.Code_OK || s.Message != "OK" {
		t.Fatalf("ok: %v", s)
	}
}

func TestStatusOfError(t *testing.T) {
	_, perr := codec.ParseExtraInfo("1 2 3")
	cases := []struct {
		err  error
		want v2.Code
	}{
		{nil, v2.Code_OK},
		{fmt.Errorf("wrapped: %w", &codec.ResponseError{Code: codec.SystemBusy, Remark: "busy"}), v2.Code_TOO_MANY_REQUESTS},
		{perr, v2.Code_INVALID_RECEIPT_HANDLE},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), v2.Code_PROXY_TIMEOUT},
		{context.Canceled, v2.Code_INTERNAL_SERVER_ERROR},
	}
	for _, c := range cases {
		s := StatusOfError(OpAck, c.err)
		if s.Code != c.want {
			t.Errorf("StatusOfError(%v) = %v, want %s", c.err, s, c.want)
		}
		if s.Message == "" {
			t.Errorf("StatusOfError(%v): empty message", c.err)
		}
	}
	if s := StatusOfError(OpGeneric, context.Canceled); !strings.Contains(s.Message, "canceled") {
		t.Errorf("cancel message %q", s.Message)
	}
	if s := StatusOfAuth("bad signature"); s.Code != v2.Code_UNAUTHORIZED || s.Message != "bad signature" {
		t.Errorf("auth: %v", s)
	}
}
