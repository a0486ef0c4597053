package handler

// DELETE_KV_CONFIG (102) — name-server role.
//
// Header: namespace (required), key (required)
// (namesrv/DeleteKVConfigRequestHeader.java).
//
// Behaviour: popshim keeps no name-server KV configuration (see
// GET_KV_CONFIG), so there is nothing to remove; the answer is SUCCESS, as a
// Java name server's KVConfigManager.deleteKVConfig answers for a missing
// item. mqadmin deleteTopic -c and deleteSubGroup -c send it for each
// topic they delete (DefaultMQAdminExtImpl.deleteTopic, namespace
// ORDER_TOPIC_CONFIG) and fail the command on any other answer.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) naming a missing header
// field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// requestDeleteKVConfig is DELETE_KV_CONFIG (102) in RocketMQ's RequestCode.java.
const requestDeleteKVConfig int32 = 102

func (b *Broker) handleDeleteKVConfig(c remoting.Conn, req *codec.Command) {
	for _, f := range []string{"namespace", "key"} {
		if _, ok := req.Ext(f); !ok {
			reply.HeaderError(c, req, &codec.FieldError{Field: f, Err: codec.ErrMissingField})
			return
		}
	}
	reply.Code(c, req, codec.Success, "")
}
