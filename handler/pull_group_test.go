package handler_test

// PULL_MESSAGE validates consumerGroup like POP, ACK and
// CONSUMER_SEND_MSG_BACK do, before the group reaches the store or a
// metrics label.

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// pullBinary sends a PULL with a ROCKETMQ binary header (whose ext values
// are raw bytes, so a group name need not be UTF-8) over a new TCP
// connection and returns the reply (code and remark).
func pullBinary(t *testing.T, addr, group, topic string) *codec.Command {
	t.Helper()
	req := pullReq(group, topic, 0, 0, 32, 0, "")
	req.Opaque = 7
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(waitFor)))
	_, err = conn.Write(codec.AppendFrameBinary(nil, req))
	require.NoError(t, err)
	var prefix [4]byte
	_, err = io.ReadFull(conn, prefix[:])
	require.NoError(t, err, "no reply to the PULL (broker gone?)")
	frame := make([]byte, 4+binary.BigEndian.Uint32(prefix[:]))
	copy(frame, prefix[:])
	_, err = io.ReadFull(conn, frame[4:])
	require.NoError(t, err)
	resp, err := codec.DecodeFrame(frame)
	require.NoError(t, err)
	return resp
}

// TestPULL_InvalidGroupRefused: a PULL whose consumerGroup is not a legal
// group name (here: not even UTF-8, which the Prometheus label of the
// messages-out counter rejects with a panic on the reader goroutine, ending
// the process) is answered SUBSCRIPTION_GROUP_NOT_EXIST (26), as a Java
// broker's findSubscriptionGroupConfig returns null for an illegal group;
// the broker keeps serving, and a legal group still pulls the message.
func TestPULL_InvalidGroupRefused(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	for _, group := range []string{"G\xcd", "G with space", strings.Repeat("g", codec.MaxGroupLength+1)} {
		resp := pullBinary(t, h.addr(), group, "T")
		require.Equal(t, codec.SubscriptionGroupNotExist, resp.Code, "group %q: %s", group, resp.Remark)
	}
	resp := pullBinary(t, h.addr(), "G", "T")
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	ms, err := codec.DecodeMessages(resp.Body)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Equal(t, "m", string(ms[0].Body))
}
