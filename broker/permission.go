package broker

import "github.com/popshim/popshim/codec"

// The broker's own permission (BrokerConfig.brokerPermission, PermName
// bits: codec.PermRead 4, codec.PermWrite 2, codec.PermInherit 1), set
// from --broker-permission and changed at run time by
// UPDATE_BROKER_CONFIG. What it gates, as a Java 5.5 broker:
//   - without read: POP ("pop message is forbidden", PopMessageProcessor),
//     PULL ("pulling message is forbidden", forbiddenType
//     BROKER_FORBIDDEN, PullMessageProcessor) and NOTIFICATION ("peeking
//     message is forbidden", NotificationProcessor) answer NO_PERMISSION
//     (16);
//   - without write: a SEND to an order topic (AbstractSendMessageProcessor
//     .msgCheck) and CONSUMER_SEND_MSG_BACK ("sending message is
//     forbidden") answer NO_PERMISSION; other SENDs are still stored, as
//     Java stores them (clients stop sending once the route says so);
//   - while it lacks read or write, every topic's perm is masked with it
//     in name-server registrations and routes (registerBrokerAll), which
//     is how an operator drains a broker.

// ForbiddenTypeBroker is ForbiddenType.BROKER_FORBIDDEN, the forbiddenType
// of a PULL refused because the broker is not readable
// (remoting/.../protocol/ForbiddenType.java).
const ForbiddenTypeBroker int32 = 1

// DefaultBrokerPermission is brokerPermission's default: read and write.
const DefaultBrokerPermission = codec.PermRead | codec.PermWrite

// BrokerPermission returns the broker's permission now. Any goroutine.
func (b *Broker) BrokerPermission() int32 { return b.perm.Load() }

// SetBrokerPermission changes the broker's permission from now on; the
// caller re-registers with the name servers (they learn the masked topic
// perms from the next registration). Any goroutine.
func (b *Broker) SetBrokerPermission(p int32) { b.perm.Store(p) }

// MaskTopicPerm returns perm as routes and registrations advertise it: masked
// with the broker's permission while that lacks read or write
// (BrokerController.registerBrokerAll), else unchanged. Any goroutine.
func (b *Broker) MaskTopicPerm(perm int32) int32 {
	if bp := b.perm.Load(); bp&DefaultBrokerPermission != DefaultBrokerPermission {
		return perm & bp
	}
	return perm
}

// lacking returns NO_PERMISSION "the broker[<brokerIP1>] <what> is
// forbidden", a Java broker's text, while the broker's permission lacks
// bit (codec.PermRead or codec.PermWrite), else nil. One atomic load when
// the bit is there.
func (b *Broker) lacking(bit int32, what string) *Error {
	if b.perm.Load()&bit != 0 {
		return nil
	}
	return Errorf(codec.NoPermission, "the broker[%s] %s is forbidden", b.StoreHost().Addr(), what)
}
