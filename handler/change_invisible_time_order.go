package handler

// CHANGE_MESSAGE_INVISIBLETIME of an orderly receipt (reviveQid 999),
// ChangeInvisibleTimeProcessor.processChangeInvisibleTimeForOrderNew
// (docs/SCENARIOS.md CHG-05):
//   - one writer op (bulk lane, like every CHANGE) sets the deadline of the
//     offset in the queue's lease to now + invisibleTime
//     (broker.ApplyOrderChange), so the queue stays blocked until then (or
//     is unblocked at once by a CHANGE to 0); nothing is written when the
//     offset is below the consume offset, the popTime is stale or the lease
//     does not hold the offset;
//   - SUCCESS when durable, always with the fields the Java broker answers:
//     popTime = the receipt's (original) popTime, invisibleTime = the new
//     deadline − popTime, reviveQid 999, and ext field extraInfo holding the
//     receipt rebuilt with them (it stays valid for ACK: the lease keeps its
//     popTime). Java leaves the fields 0 when the offset is below the
//     consume offset; popshim answers them there too, so the handle it
//     hands out stays well-formed.

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// submitOrderChange queues the CHANGE of orderly receipt ei (validated by
// CheckReceipt) at broker time now (Unix ms). Event loop.
func (b *Broker) submitOrderChange(c remoting.Conn, req *codec.Command, h codec.ChangeInvisibleTimeRequestHeader, ei codec.ExtraInfo, now int64) {
	visibleAt := now + h.InvisibleTime
	var changed bool
	op := &batch.Op{
		Lane:  batch.LaneBulk,
		Bytes: 128,
		Apply: func(tx *popstore.Txn) (err error) {
			changed, err = broker.ApplyOrderChange(tx, h.ConsumerGroup, h.Topic, h.QueueID, h.Offset, ei.PopTime, visibleAt)
			return err
		},
		Done: func(err error) {
			if err != nil {
				reply.Code(c, req, broker.WriteErrorCode(err), "change invisible time failed: "+err.Error())
				return
			}
			if changed {
				b.Svc.OrderChanged(h.ConsumerGroup, h.Topic, h.QueueID)
			}
			handle := ei // as the client rebuilds it (ExtraInfoUtil.buildExtraInfo with the request offset)
			handle.CkQueueOffset = h.Offset
			handle.InvisibleTime = visibleAt - ei.PopTime
			resp := codec.NewResponse(req, codec.Success, "")
			codec.ChangeInvisibleTimeResponseHeader{PopTime: ei.PopTime, InvisibleTime: handle.InvisibleTime, ReviveQid: codec.PopOrderReviveQueue}.Encode(resp)
			resp.SetExt("extraInfo", handle.String())
			reply.Respond(c, req, resp)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("change invisible time", err))
	}
}
