package grpcserver

import (
	"math/rand/v2"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
)

// txnChecker is the gRPC side of transaction.Checker: it relays a check of
// an undecided half message to one v5 producer of its group as
// TelemetryCommand{recover_orphaned_transaction_command} on the producer's
// Telemetry stream, what rocketmq-proxy's GrpcClientChannel does with the
// broker's CHECK_TRANSACTION_STATE. A v5 producer's group is the topic
// name (SendMessage stores PGROUP = topic), so the producers asked are
// those whose last Settings publish that topic and whose stream is open,
// one picked at random. The command carries the half as a v5 Message
// (RecordMessage: real topic, message_type TRANSACTION, the check count in
// TRANSACTION_CHECK_TIMES) and the transaction id a SendResultEntry gave
// (broker.TransactionHandle); the producer's checker answers with
// EndTransaction, source SOURCE_SERVER_CHECK (Java; Go v5.1.4 leaves the
// source unset).
type txnChecker struct {
	svc *service
}

// ServeTransactionChecks makes the endpoint one way the core's check loop
// reaches producers (transaction.Loop.AddChecker, next to the remoting
// listener's). Call once Serve runs; the returned function takes it out
// again (call it before the core closes). Any goroutine.
func (s *Server) ServeTransactionChecks() (remove func()) {
	return s.svc.core.Transactions.AddChecker(&txnChecker{svc: s.svc})
}

// Check queues c on the Telemetry stream of one producer of
// c.ProducerGroup and reports whether one took it: false when no such
// producer has an open stream, when every such stream's outbox is full,
// or when the half does not decode (logged). Runs on the check loop's
// goroutine and never waits for a stream.
func (k *txnChecker) Check(c transaction.Check) bool {
	streams := k.svc.clients.producerStreams(c.ProducerGroup)
	if len(streams) == 0 {
		return false
	}
	m, _, err := codec.DecodeMessage(c.Body)
	if err != nil {
		k.svc.log.Error().Err(err).Str("producerGroup", c.ProducerGroup).Int64("commitLogOffset", c.CommitLogOffset).
			Msg("transaction check: half message does not decode; not sent")
		return false
	}
	msg := RecordMessage(&m, DeliveryOptions{Now: nowOf(k.svc.core), MaxInflatedBytes: k.svc.send.MaxInflatedBytes})
	cmd := &v2.TelemetryCommand{Command: &v2.TelemetryCommand_RecoverOrphanedTransactionCommand{
		RecoverOrphanedTransactionCommand: &v2.RecoverOrphanedTransactionCommand{
			Message: msg,
			TransactionId: broker.TransactionHandle{CommitLogOffset: c.CommitLogOffset,
				TranStateTableOffset: c.TranStateTableOffset}.String(),
		}}}
	start := rand.IntN(len(streams))
	for i := range streams {
		if streams[(start+i)%len(streams)].offer(cmd) {
			return true
		}
	}
	k.svc.log.Warn().Str("producerGroup", c.ProducerGroup).Int("streams", len(streams)).
		Msg("transaction check: every producer's telemetry outbox is full; not sent")
	return false
}
