package broker

// The client registry's other operations: UnregisterClient
// (UNREGISTER_CLIENT 35 of remoting, NotifyClientTermination of gRPC;
// ClientManageProcessor.unregisterClient) and ConsumerList
// (GET_CONSUMER_LIST_BY_GROUP 38; ConsumerManageProcessor
// getConsumerListByGroup).
//
// UnregisterClient removes the client from the named producer and/or
// consumer group in the ClientTable (Java clients send it on shutdown,
// once per group and once more for CLIENT_INNER_PRODUCER). Unknown clients
// and groups are not an error, nor is an empty clientID (remoting's header
// decode refuses an absent one): nothing is removed. The consumer group's
// remaining members get NOTIFY_CONSUMER_IDS_CHANGED when the client left
// it (consumer_ids.go). Response codes: SUCCESS (0).
//
// ConsumerList answers the clientIDs of the group's live members
// (heartbeat within 120 s), sorted. Push consumers with client-side
// rebalance (the Go client, Java with clientRebalance=true) allocate queues
// from it. Response codes: SUCCESS (0); SYSTEM_ERROR (1) "no consumer for
// this group, <group>" when the group has no live member (as
// ConsumerManageProcessor answers).

import "github.com/popshim/popshim/codec"

// UnregisterClientRequest names a client and the groups it leaves
// (header/UnregisterClientRequestHeader.java: clientID, producerGroup,
// consumerGroup).
type UnregisterClientRequest struct {
	ClientID      string
	ProducerGroup string // "": no producer group
	ConsumerGroup string // "": no consumer group
}

// UnregisterClient removes r.ClientID from r.ProducerGroup and
// r.ConsumerGroup. done runs on the caller's goroutine before
// UnregisterClient returns, always with nil (the callback keeps the
// operation contract). Any goroutine; memory only.
func (b *Broker) UnregisterClient(r UnregisterClientRequest, done func(error)) {
	if _, left := b.Clients.Unregister(r.ClientID, r.ProducerGroup, r.ConsumerGroup); left {
		b.consumerIDsChanged([]string{r.ConsumerGroup}, true)
	}
	done(nil)
}

// ConsumerListRequest names the consumer group whose members are wanted
// (header/GetConsumerListByGroupRequestHeader.java: consumerGroup).
type ConsumerListRequest struct {
	ConsumerGroup string
}

// ConsumerList gives done the sorted clientIDs of r.ConsumerGroup's live
// members, or an *Error (SYSTEM_ERROR) when it has none. done runs on the
// caller's goroutine before ConsumerList returns. Any goroutine; memory
// only.
func (b *Broker) ConsumerList(r ConsumerListRequest, done func([]string, error)) {
	ids := b.Clients.ConsumerIDs(r.ConsumerGroup)
	if len(ids) == 0 {
		done(nil, &Error{Code: codec.SystemError, Remark: "no consumer for this group, " + r.ConsumerGroup})
		return
	}
	done(ids, nil)
}
