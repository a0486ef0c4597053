package handler

// GET_KV_CONFIG (101) — name-server role.
//
// Header: namespace (required), key (required)
// (namesrv/GetKVConfigRequestHeader.java).
//
// Behaviour: popshim keeps no name-server KV configuration (the Java name
// server's kvConfig.json, used for ORDER_TOPIC_CONFIG and similar), so every
// lookup is answered the way a Java name server answers a missing item.
// Admin tools and older clients that read order-topic configuration then
// proceed with their defaults.
//
// Response codes: QUERY_NOT_FOUND (22) with remark
// "No config item, Namespace: <namespace> Key: <key>"; SYSTEM_ERROR (1)
// naming a missing header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// requestGetKVConfig is GET_KV_CONFIG (101) in RocketMQ's RequestCode.java.
const requestGetKVConfig int32 = 101

func (b *Broker) handleGetKVConfig(c remoting.Conn, req *codec.Command) {
	ns, ok := req.Ext("namespace")
	if !ok {
		reply.HeaderError(c, req, &codec.FieldError{Field: "namespace", Err: codec.ErrMissingField})
		return
	}
	key, ok := req.Ext("key")
	if !ok {
		reply.HeaderError(c, req, &codec.FieldError{Field: "key", Err: codec.ErrMissingField})
		return
	}
	reply.Code(c, req, codec.QueryNotFound, "No config item, Namespace: "+ns+" Key: "+key)
}
