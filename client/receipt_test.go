package client

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// popResponse builds a SUCCESS POP response with one stored record per
// (topic, queueId, queueOffset, props) in body order.
func popResponse(t *testing.T, h codec.PopMessageResponseHeader, msgs ...codec.MessageExt) *codec.Command {
	t.Helper()
	resp := codec.NewResponse(&codec.Command{}, codec.Success, "")
	h.Encode(resp)
	for i := range msgs {
		m := &msgs[i]
		m.BornHost = netip.MustParseAddrPort("127.0.0.1:5000")
		m.StoreHost = netip.MustParseAddrPort("127.0.0.1:10911")
		var err error
		resp.Body, err = codec.AppendMessage(resp.Body, m)
		require.NoError(t, err)
	}
	return resp
}

func msg(topic string, qid int32, off int64, props string) codec.MessageExt {
	return codec.MessageExt{Message: codec.Message{Topic: topic, Body: []byte("x"), Properties: props}, QueueID: qid, QueueOffset: off}
}

func TestReceiptsFromPopNewPath(t *testing.T) {
	var so, mo []byte
	so = codec.AppendStartOffsetInfo(so, codec.RetryFlagNormal, 1, 40)
	so = codec.AppendStartOffsetInfo(so, codec.RetryFlagV2, 0, 7)
	mo = codec.AppendMsgOffsetInfo(mo, codec.RetryFlagNormal, 1, []int64{40, 42})
	mo = codec.AppendMsgOffsetInfo(mo, codec.RetryFlagV2, 0, []int64{7})
	retry := codec.PopRetryTopicV2("g", "T")
	resp := popResponse(t, codec.PopMessageResponseHeader{PopTime: 1700000000000, InvisibleTime: 60000, ReviveQid: 3,
		StartOffsetInfo: string(so), MsgOffsetInfo: string(mo)},
		msg("T", 1, 40, ""), msg(retry, 0, 7, ""), msg("T", 1, 41, "")) // msgOffsetInfo wins over the record's 41
	rs, err := ReceiptsFromPop(nil, resp, "T", "g", "broker-a")
	require.NoError(t, err)
	require.Equal(t, []Receipt{
		{Topic: "T", QueueID: 1, Offset: 40, ExtraInfo: "40 1700000000000 60000 3 0 broker-a 1 40"},
		{Topic: retry, QueueID: 0, Offset: 7, ExtraInfo: "7 1700000000000 60000 3 2 broker-a 0 7"},
		{Topic: "T", QueueID: 1, Offset: 42, ExtraInfo: "40 1700000000000 60000 3 0 broker-a 1 42"},
	}, rs)
}

func TestReceiptsFromPopOldPathAndPopCK(t *testing.T) {
	ck := "5 1600000000000 30000 1 1 other 2 9"
	props, err := codec.SetProperty("", codec.PropertyPopCK, ck)
	require.NoError(t, err)
	resp := popResponse(t, codec.PopMessageResponseHeader{PopTime: 1700000000000, InvisibleTime: 60000},
		msg("T", 3, 10, ""), msg("T", 3, 11, ""), msg("T", 2, 9, props))
	rs, err := ReceiptsFromPop(nil, resp, "T", "g", "b")
	require.NoError(t, err)
	require.Len(t, rs, 3)
	require.Equal(t, "10 1700000000000 60000 0 0 b 3 10", rs[0].ExtraInfo)
	require.Equal(t, "10 1700000000000 60000 0 0 b 3 11", rs[1].ExtraInfo, "old path: field 0 is the queue's first offset")
	require.Equal(t, Receipt{Topic: codec.PopRetryTopicV1("g", "T"), QueueID: 2, Offset: 9, ExtraInfo: ck}, rs[2], "POP_CK is kept as is")
}

func TestReceiptsFromPopMissingInfo(t *testing.T) {
	so := codec.AppendStartOffsetInfo(nil, codec.RetryFlagNormal, 1, 40)
	mo := codec.AppendMsgOffsetInfo(nil, codec.RetryFlagNormal, 1, []int64{40})
	resp := popResponse(t, codec.PopMessageResponseHeader{PopTime: 1, InvisibleTime: 2, StartOffsetInfo: string(so), MsgOffsetInfo: string(mo)},
		msg("T", 1, 40, ""), msg("T", 1, 41, ""))
	_, err := ReceiptsFromPop(nil, resp, "T", "g", "b")
	require.ErrorContains(t, err, "no offset info")

	resp = popResponse(t, codec.PopMessageResponseHeader{PopTime: 1, InvisibleTime: 2, StartOffsetInfo: string(so), MsgOffsetInfo: string(mo)},
		msg("T", 2, 40, ""))
	_, err = ReceiptsFromPop(nil, resp, "T", "g", "b")
	require.ErrorContains(t, err, "queueId 2")

	bad := popResponse(t, codec.PopMessageResponseHeader{PopTime: 1, InvisibleTime: 2}, msg("T", 1, 1, ""))
	bad.Body = bad.Body[:len(bad.Body)-1]
	_, err = ReceiptsFromPop(nil, bad, "T", "g", "b")
	require.ErrorIs(t, err, codec.ErrBadMessage)
}
