package broker

// CheckClientConfig: CHECK_CLIENT_CONFIG (46) of remoting,
// broker/.../processor/ClientManageProcessor.checkClientConfig. A Java
// consumer (push or lite pull) sends it at start for each subscription
// that is not of a TAG type and refuses to start when it is not SUCCESS
// (MQClientInstance.checkClientInBroker).
//
// Request (CheckClientConfigRequest, from CheckClientRequestBody.java):
// clientId, group, subscriptionData (expressionType, subString), namespace.
//
// Behaviour, memory only: no subscription, or a TAG type ("" or TAG) →
// SUCCESS; --enable-property-filter off → SYSTEM_ERROR (1) "The broker
// does not support consumer to filter message by <expressionType>";
// SQL92 → the expression is compiled (broker/filter) and SUCCESS, or
// SUBSCRIPTION_PARSE_FAILED (23) with the compile error as the remark
// (line, column, token), as Java answers its parse exception's message;
// any other type → SUBSCRIPTION_PARSE_FAILED. Nothing is registered.

import (
	"github.com/popshim/popshim/broker/filter"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// CheckClientConfigRequest is one CHECK_CLIENT_CONFIG: the client and
// group it names (for logs) and the subscription to check.
type CheckClientConfigRequest struct {
	ClientID string
	Group    string
	// HasSubscription is false when the request carries none (SUCCESS).
	HasSubscription bool
	// ExpressionType and Expression are the subscription's expressionType
	// ("TAG", "SQL92") and subString (SubscriptionData.java).
	ExpressionType string
	Expression     string
}

// CheckClientConfig answers whether the broker can serve r's
// subscription; done gets nil (SUCCESS) or an *Error with the codes above.
// done runs on the caller's goroutine before CheckClientConfig returns.
// Any goroutine; never blocks.
func (b *Broker) CheckClientConfig(r CheckClientConfigRequest, done func(error)) {
	if !r.HasSubscription {
		done(nil)
		return
	}
	if isTagType(r.ExpressionType) {
		done(nil) // Java does not look at a TAG expression here
		return
	}
	if e := b.CheckPropertyFilter(r.ExpressionType); e != nil {
		done(e)
		return
	}
	if !longpoll.IsSQL92(r.ExpressionType) {
		done(Errorf(codec.SubscriptionParseFailed, "unknown expression type %q", r.ExpressionType))
		return
	}
	if _, err := filter.Cached(r.Expression); err != nil {
		b.Log.Debug().Err(err).Str("clientId", r.ClientID).Str("group", r.Group).Msg("check client config: SQL92 expression does not compile")
		done(&Error{Code: codec.SubscriptionParseFailed, Remark: err.Error()})
		return
	}
	done(nil)
}
