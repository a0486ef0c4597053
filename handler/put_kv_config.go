package handler

// PUT_KV_CONFIG (100) — name-server role.
//
// Header: namespace, key, value (required)
// (namesrv/PutKVConfigRequestHeader.java).
//
// Behaviour: popshim keeps no name-server KV configuration (see
// GET_KV_CONFIG): the item is accepted and not kept, so GET_KV_CONFIG still
// answers QUERY_NOT_FOUND and routes carry no orderTopicConf. mqadmin
// `updateTopic -o true` sends it (namespace ORDER_TOPIC_CONFIG, value
// "brokerName:queueNums;...") after creating the topic and fails the command
// on any answer but SUCCESS. The order-topic configuration only steers old
// producers' queue choice; POP and FIFO consumers do not read it.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) naming a missing header
// field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handlePutKVConfig(c remoting.Conn, req *codec.Command) {
	for _, f := range []string{"namespace", "key", "value"} {
		if _, ok := req.Ext(f); !ok {
			reply.HeaderError(c, req, &codec.FieldError{Field: f, Err: codec.ErrMissingField})
			return
		}
	}
	b.Log.Debug().Str("namespace", req.ExtFields["namespace"]).Str("key", req.ExtFields["key"]).
		Msg("PUT_KV_CONFIG accepted, not kept")
	reply.Code(c, req, codec.Success, "")
}
