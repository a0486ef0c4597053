package handler

import (
	"errors"
	"net"
	"sync/atomic"

	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// idsNotifier is the remoting side of broker.ConsumerIDsNotifier: it sends
// NOTIFY_CONSUMER_IDS_CHANGED (40) oneway, header consumerGroup
// (NotifyConsumerIdsChangedRequestHeader.java) and no body, to every member
// of the group whose connection is on this listener
// (Broker2Client.notifyConsumerIdsChanged). remoting.Server.Send only
// queues the frame, so the caller (the core's announcement goroutine,
// broker/consumer_ids_queue.go) never waits; a member whose connection is
// not this server's (a gRPC stream), is gone, or has not read what it was
// sent (remoting.ErrPushBacklog) is skipped.
type idsNotifier struct {
	srv    *remoting.Server
	opaque atomic.Int32
	log    func(group string, connID uint64, err error)
}

// ServeConsumerIDsChanges makes srv, the broker listener, the way the core
// tells consumers that their group's membership changed
// (broker.SetConsumerIDsNotifier). Call once the server started.
func (b *Broker) ServeConsumerIDsChanges(srv *remoting.Server) {
	b.SetConsumerIDsNotifier(&idsNotifier{srv: srv, log: func(group string, connID uint64, err error) {
		b.Log.Debug().Err(err).Str("consumerGroup", group).Uint64("conn", connID).Msg("NOTIFY_CONSUMER_IDS_CHANGED not sent")
	}})
}

// NotifyConsumerIDsChanged sends one oneway request per member (see
// broker.ConsumerIDsNotifier). Any goroutine; never blocks.
func (n *idsNotifier) NotifyConsumerIDsChanged(group string, members []clients.ClientChannel) {
	for i := range members {
		req := codec.NewRequest(codec.RequestNotifyConsumerIDsChanged, n.opaque.Add(1), nil, nil)
		req.Flag |= codec.FlagOneway
		codec.NotifyConsumerIDsChangedRequestHeader{ConsumerGroup: group}.Encode(req)
		if err := n.srv.Send(members[i].ConnID, req); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, remoting.ErrPushBacklog) {
			n.log(group, members[i].ConnID, err)
		}
	}
}
