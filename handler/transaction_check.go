package handler

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// txnChecker is the remoting side of transaction.Checker: it sends
// CHECK_TRANSACTION_STATE (39) oneway, header
// codec.CheckTransactionStateRequestHeader and the half message as body
// (Broker2Client.checkProducerTransactionState), to one connection of a
// producer that announced the group with HEART_BEAT. The channel is picked
// at random among the group's live ones, as ProducerManager
// .getAvailableChannel does; one whose connection is gone is skipped for
// the next. Called on the check-back loop's goroutine; Send only queues
// the frame.
type txnChecker struct {
	clients *clients.ClientTable
	srv     *remoting.Server
	opaque  atomic.Int32
}

// ServeTransactionChecks makes srv, the broker listener, one way the
// core's check-back loop reaches producers (transaction.Loop.AddChecker;
// a gRPC endpoint adds its own). Call once the server started; the
// returned function takes it out again.
func (b *Broker) ServeTransactionChecks(srv *remoting.Server) (remove func()) {
	return b.Transactions.AddChecker(&txnChecker{clients: b.Clients, srv: srv})
}

// Check sends c to one live producer of c.ProducerGroup; false when none
// could be written to.
func (k *txnChecker) Check(c transaction.Check) bool {
	chans, ok := k.clients.Producers(c.ProducerGroup)
	if !ok {
		return false
	}
	req := codec.NewRequest(codec.RequestCheckTransactionState, k.opaque.Add(1), nil, c.Body)
	req.Flag |= codec.FlagOneway
	codec.CheckTransactionStateRequestHeader{Topic: c.Topic, TranStateTableOffset: c.TranStateTableOffset,
		CommitLogOffset: c.CommitLogOffset, MsgID: c.MsgID, TransactionID: c.TransactionID,
		OffsetMsgID: c.OffsetMsgID, BrokerName: c.BrokerName}.Encode(req)
	start := rand.IntN(len(chans))
	for i := range chans {
		if k.srv.Send(chans[(start+i)%len(chans)].ConnID, req) == nil {
			return true
		}
	}
	return false
}
