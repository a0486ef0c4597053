package handler

// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201),
// broker/.../processor/AdminBrokerProcessor.java getAllSubscriptionGroup.
//
// Header: none from older clients; the 5.5 admin client sends groupSeq,
// maxGroupNum and dataVersion for paging
// (GetAllSubscriptionGroupRequestHeader.java). popshim ignores them and
// answers the whole table every time, with totalGroupNum = table size in
// the response header, which ends the 5.5 client's paging loop after the
// first reply (MQClientAPIImpl.getAllSubscriptionGroup).
//
// Behaviour: the body is a SubscriptionGroupWrapper
// (remoting/.../protocol/body/SubscriptionGroupWrapper.java):
// {"dataVersion":{counter,stateVersion,timestamp},"forbiddenTable":{},
// "subscriptionGroupTable":{name:SubscriptionGroupConfig,...}} over every
// durable group (system groups included; an auto-created group whose
// write is still queued is not listed yet). dataVersion counts committed
// group changes (popstore.Store.GroupsDataVersion). Read from memory on
// the event loop.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) for a present but
// non-numeric groupSeq or maxGroupNum.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetAllSubscriptionGroupConfig(c remoting.Conn, req *codec.Command) {
	if _, err := codec.DecodeGetAllSubscriptionGroupRequestHeader(req.ExtFields); err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	w := b.Store.GroupTable()
	resp := codec.NewResponse(req, codec.Success, "")
	codec.GetAllSubscriptionGroupResponseHeader{TotalGroupNum: int32(len(w.SubscriptionGroupTable))}.Encode(resp)
	resp.Body = codec.AppendSubscriptionGroupWrapper(nil, &w)
	reply.Respond(c, req, resp)
}
