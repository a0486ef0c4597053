package handler_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// A SEND whose stored properties would leave no room for what a POP
// appends (POP_CK) is refused MESSAGE_ILLEGAL naming the properties,
// single and batch, and nothing is stored: before the bound such a message
// was stored, then skipped by every POP ("cannot re-encode record") and
// never delivered. One just under the bound is popped.
func TestSendPropertiesLeaveRoomForPop(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()

	long := sendOpts{props: map[string]string{"K": strings.Repeat("v", codec.MaxPropertiesLen-200)}}
	resp := call(t, c, sendReq("T", 0, []byte("too long"), long))
	require.Equal(t, codec.MessageIllegal, resp.Code, resp.Remark)
	require.Contains(t, resp.Remark, "properties length")

	var body []byte
	body, err := codec.AppendBatchEntry(body, &codec.Message{Body: []byte("ok")})
	require.NoError(t, err)
	body, err = codec.AppendBatchEntry(body, &codec.Message{Body: []byte("x"),
		Properties: "K\x01" + strings.Repeat("v", codec.MaxSendPropertiesLen) + "\x02"})
	require.NoError(t, err)
	hdr := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "T", QueueID: 0, Batch: true}
	req := codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
	hdr.EncodeV2(req)
	resp = call(t, c, req)
	require.Equal(t, codec.MessageIllegal, resp.Code, resp.Remark)
	require.Contains(t, resp.Remark, "batch entry 1: the message properties length")

	fits := sendOpts{props: map[string]string{"K": strings.Repeat("v", codec.MaxSendPropertiesLen-200)}}
	send(t, c, "T", 0, "fits", fits)
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
	require.Equal(t, []string{"fits"}, bodies(ms), "the refused SENDs stored nothing; the one under the bound is popped")
}
