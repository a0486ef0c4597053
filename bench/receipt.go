package bench

import (
	"fmt"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// changedReceipt returns r with the popTime, invisibleTime and reviveQid of
// a SUCCESS CHANGE_MESSAGE_INVISIBLETIME response, as the Java client
// rebuilds the handle after a change (field 0 and fields 4–7 are kept).
func changedReceipt(r client.Receipt, resp *codec.Command) (client.Receipt, error) {
	h, err := codec.DecodeChangeInvisibleTimeResponseHeader(resp.ExtFields)
	if err != nil {
		return r, fmt.Errorf("bench: change response header: %w", err)
	}
	ei, err := codec.ParseExtraInfo(r.ExtraInfo)
	if err != nil {
		return r, err
	}
	ei.PopTime, ei.InvisibleTime, ei.ReviveQid = h.PopTime, h.InvisibleTime, h.ReviveQid
	r.ExtraInfo = ei.String()
	return r, nil
}
