package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

func TestChangedReceipt(t *testing.T) {
	r := client.Receipt{Topic: "T", QueueID: 1, Offset: 42, ExtraInfo: "40 1700000000000 60000 3 0 broker-a 1 42"}
	resp := codec.NewResponse(&codec.Command{}, codec.Success, "")
	codec.ChangeInvisibleTimeResponseHeader{PopTime: 1700000005000, InvisibleTime: 300000, ReviveQid: 5}.Encode(resp)
	nr, err := changedReceipt(r, resp)
	require.NoError(t, err)
	require.Equal(t, "40 1700000005000 300000 5 0 broker-a 1 42", nr.ExtraInfo)
	require.Equal(t, r.Offset, nr.Offset)

	_, err = changedReceipt(r, codec.NewResponse(&codec.Command{}, codec.Success, ""))
	require.Error(t, err, "a response without the header is an error")
}
