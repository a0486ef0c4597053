package handler

// HEART_BEAT (34): the remoting adapter of broker.Broker.Heartbeat, where
// the behaviour and the response codes are listed
// (ClientManageProcessor.heartBeat).
//
// Header: none of its own (HeartbeatRequestHeader.java); the frame's
// language and version go into the registration. Body: JSON HeartbeatData
// {clientID, producerDataSet, consumerDataSet, ...} from the Java or the Go
// client (codec.DecodeHeartbeatData accepts both). A body over 1 MiB →
// INVALID_PARAMETER (29); a body that is not a heartbeat → SYSTEM_ERROR (1)
// "heartbeat: <cause>". Neither registers anything.
//
// Reply: SUCCESS carries version 479 (V5_3_3), which the client records as
// the broker version, and IS_SUPPORT_HEART_BEAT_V2=false, so clients keep
// sending full heartbeats (codec.HeartbeatResponseHeader).
//
// Fast path for an unchanged heartbeat (popshim's; RocketMQ's heartbeat v2
// skips an unchanged heartbeat by a client-sent fingerprint, which popshim
// does not offer). A client repeats the same body every 30 s on each
// connection, so each connection remembers its last accepted heartbeat
// (hbCache, clients.HeartbeatCache: a copy of the body if at most
// clients.MaxCachedHeartbeatBytes, 8 KiB, the request's language and
// version, and the registration the core made from it). A heartbeat whose
// body, language and version are byte-identical to that one skips the
// JSON decode, the bounds and the planning (functions of those bytes and of
// the fixed configuration, so they would give the same result) and goes to
// broker.Broker.RefreshHeartbeat, which applies only while every consumer
// group still exists (or may be auto-created) and the clientID is still
// registered over this connection in every group of the heartbeat; it then
// leaves the table as Heartbeat would (every group's LastUpdateMillis set
// to now, consumer settings and subscriptions the heartbeat's;
// --max-conn-client-channels cannot refuse a heartbeat that adds no
// membership). Otherwise (after UNREGISTER_CLIENT, expiry, the clientID
// moving to another connection, a cached group deleted with auto-creation
// off) the full path runs. Both paths log the skipped entries, ensure the
// group configuration and retry topic, and send the same reply. The entry
// is replaced by each accepted heartbeat, dropped by a refused or oversized
// one, by one whose unknown groups were left out (HeartbeatResult.Dropped:
// once an admin creates them the same body must register them) and when
// the connection closes (OnConnClose).

import (
	"fmt"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// maxHeartbeatBodyBytes bounds the HEART_BEAT body decoded on the event loop
// (1 MiB; a client with a hundred subscriptions sends a few tens of KiB).
// A larger heartbeat is INVALID_PARAMETER (29) and registers nothing.
const maxHeartbeatBodyBytes = 1 << 20

func (b *Broker) handleHeartBeat(c remoting.Conn, req *codec.Command) {
	connID := c.ID()
	if last := b.hbCache.Match(connID, req); last != nil && b.RefreshHeartbeat(&last.Reg, last.Skipped) {
		replyHeartbeat(c, req)
		return
	}
	if len(req.Body) > maxHeartbeatBodyBytes {
		b.hbCache.Forget(connID)
		reply.Code(c, req, codec.InvalidParameter, fmt.Sprintf("heartbeat body of %d bytes exceeds %d", len(req.Body), maxHeartbeatBodyBytes))
		return
	}
	hb, err := codec.DecodeHeartbeatData(req.Body)
	if err != nil {
		b.hbCache.Forget(connID)
		reply.Code(c, req, codec.SystemError, "heartbeat: "+err.Error())
		return
	}
	r := heartbeatRequest(&hb)
	r.Language, r.Version, r.ConnID = req.Language, req.Version, connID
	if a := c.RemoteAddr(); a != nil {
		r.RemoteAddr = a.String()
	}
	b.Heartbeat(r, func(res broker.HeartbeatResult, err error) {
		switch {
		case err != nil:
			b.hbCache.Forget(connID)
			reply.Err(c, req, err)
			return
		case res.Dropped:
			b.hbCache.Forget(connID)
		default:
			b.hbCache.Remember(connID, req, res.Registered, res.Skipped)
		}
		replyHeartbeat(c, req)
	})
}

// heartbeatRequest carries a decoded heartbeat's clientID and groups,
// as sent, into the core's request (the connection fields are the
// caller's). The request aliases hb's strings and tag slices.
func heartbeatRequest(hb *codec.HeartbeatData) broker.HeartbeatRequest {
	r := broker.HeartbeatRequest{ClientID: hb.ClientID, Consumers: make([]clients.ConsumerRegistration, 0, len(hb.ConsumerDataSet))}
	for i := range hb.ConsumerDataSet {
		cd := &hb.ConsumerDataSet[i]
		cr := clients.ConsumerRegistration{Group: cd.GroupName, ConsumeType: cd.ConsumeType, MessageModel: cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere, Subscriptions: make([]clients.Subscription, 0, len(cd.SubscriptionDataSet))}
		for _, s := range cd.SubscriptionDataSet {
			cr.Subscriptions = append(cr.Subscriptions, clients.Subscription{Topic: s.Topic, SubString: s.SubString,
				ExpressionType: s.ExpressionType, Tags: s.TagsSet, SubVersion: s.SubVersion})
		}
		r.Consumers = append(r.Consumers, cr)
	}
	if len(hb.ProducerDataSet) > 0 {
		r.Producers = make([]string, 0, len(hb.ProducerDataSet))
		for _, pd := range hb.ProducerDataSet {
			r.Producers = append(r.Producers, pd.GroupName)
		}
	}
	return r
}

// replyHeartbeat answers SUCCESS with the heartbeat response header.
func replyHeartbeat(c remoting.Conn, req *codec.Command) {
	resp := codec.NewResponse(req, codec.Success, "")
	codec.HeartbeatResponseHeader{}.Encode(resp)
	reply.Respond(c, req, resp)
}
