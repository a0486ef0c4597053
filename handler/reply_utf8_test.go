package handler_test

// Replies are valid JSON (RFC 8259 §8.1: UTF-8) even when their remark
// quotes bytes of the request that are not UTF-8.

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestReplyHeaderIsUTF8: a BATCH_ACK whose retry flag is the byte 0xE8 is
// refused with MESSAGE_ILLEGAL; the remark names the bad value, and the
// reply header the broker writes is still UTF-8 and valid JSON (a strict
// decoder such as serde_json would otherwise drop the reply, and the client
// would wait for a timeout instead of reading the error).
func TestReplyHeaderIsUTF8(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	body := []byte(`{"brokerName":"broker-pop","acks":[{"c":"G","t":"T","r":"` + "\xe8" + `","so":0,"q":0,"rq":0,"pt":1,"it":1000,"b":"AQ=="}]}`)
	req := codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, body)
	req.Opaque = 42

	conn, err := net.Dial("tcp", h.addr())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(waitFor)))
	_, err = conn.Write(codec.AppendFrame(nil, req))
	require.NoError(t, err)

	var prefix [8]byte
	_, err = io.ReadFull(conn, prefix[:])
	require.NoError(t, err)
	frameLen := binary.BigEndian.Uint32(prefix[:4])
	headerLen := binary.BigEndian.Uint32(prefix[4:]) & 0xFFFFFF
	require.Equal(t, byte(codec.SerializeJSON), prefix[4])
	require.LessOrEqual(t, headerLen+4, frameLen)
	header := make([]byte, headerLen)
	_, err = io.ReadFull(conn, header)
	require.NoError(t, err)

	require.True(t, utf8.Valid(header), "reply header is not UTF-8: %q", header)
	var resp struct {
		Code   int32  `json:"code"`
		Opaque int32  `json:"opaque"`
		Remark string `json:"remark"`
	}
	require.NoError(t, json.Unmarshal(header, &resp))
	require.Equal(t, codec.MessageIllegal, resp.Code)
	require.EqualValues(t, 42, resp.Opaque)
	require.Contains(t, resp.Remark, "retry flag \"\uFFFD\"")
}
