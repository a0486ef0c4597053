package handler

// CHECK_CLIENT_CONFIG (46): adapter of broker.CheckClientConfig.
//
// Header: none. Body: JSON CheckClientRequestBody {clientId, group,
// subscriptionData {topic, subString, expressionType, ...}, namespace};
// an empty body checks nothing (SUCCESS). A body that is not JSON →
// SYSTEM_ERROR (1). Reply: SUCCESS (0) without remark, or the core's code
// and remark.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleCheckClientConfig(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeCheckClientRequestBody(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, err.Error())
		return
	}
	r := broker.CheckClientConfigRequest{ClientID: body.ClientID, Group: body.Group}
	if s := body.SubscriptionData; s != nil {
		r.HasSubscription, r.ExpressionType, r.Expression = true, s.ExpressionType, s.SubString
	}
	b.CheckClientConfig(r, func(err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		reply.Code(c, req, codec.Success, "")
	})
}
