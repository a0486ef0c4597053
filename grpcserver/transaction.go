package grpcserver

import (
	"context"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// EndTransaction (the proxy's EndTransactionActivity) commits or rolls
// back the half message a transactional SendMessage stored. The
// transaction_id is the broker.TransactionHandle the SendResultEntry (or
// the RecoverOrphanedTransactionCommand) carried; the producer group is
// the request's topic, as the proxy names it. The call is the core's
// END_TRANSACTION (broker.Broker.EndTransaction): resolution COMMIT is
// commitOrRollback 8, ROLLBACK 12, TRANSACTION_RESOLUTION_UNSPECIFIED 0
// (nothing done, OK: the half waits for its next check); source
// SOURCE_SERVER_CHECK is fromTransactionCheck. Unlike the proxy, which
// sends END_TRANSACTION oneway and answers OK at once, the answer comes
// after the decision is durable, with the core's refusal if any.
//
// Codes: OK; CLIENT_ID_REQUIRED; ILLEGAL_TOPIC; INVALID_TRANSACTION_ID for a
// blank id (the proxy's text), an id that does not parse, and an id that
// names no undecided half of this topic (unknown, decided already, another
// topic's); BAD_REQUEST when a client's own decision comes after the
// half's CHECK_IMMUNITY_TIME_IN_SECONDS (it must wait for the check); the
// core's other refusals through the status table (TOPIC_NOT_FOUND when
// the real topic was deleted, TOO_MANY_REQUESTS when the writer is busy or
// shutting down, INTERNAL_SERVER_ERROR for a failed write).
func (s *service) EndTransaction(ctx context.Context, req *v2.EndTransactionRequest) (*v2.EndTransactionResponse, error) {
	answer := func(st *v2.Status) (*v2.EndTransactionResponse, error) {
		return &v2.EndTransactionResponse{Status: st}, nil
	}
	if _, st := requireClient(ctx); st != nil {
		return answer(st)
	}
	if st := s.authorize(ctx, req); st != nil {
		return answer(st)
	}
	topic := req.GetTopic().GetName()
	if err := validateTopic(topic); err != nil {
		return answer(NewStatus(v2.Code_ILLEGAL_TOPIC, err.Error()))
	}
	id := req.GetTransactionId()
	if strings.TrimSpace(id) == "" {
		return answer(NewStatus(v2.Code_INVALID_TRANSACTION_ID, "transaction id cannot be empty"))
	}
	h, err := broker.ParseTransactionHandle(id)
	if err != nil {
		return answer(NewStatus(v2.Code_INVALID_TRANSACTION_ID, err.Error()))
	}
	r := broker.EndTransactionRequest{
		ProducerGroup:        topic,
		CommitLogOffset:      h.CommitLogOffset,
		TranStateTableOffset: h.TranStateTableOffset,
		CommitOrRollback:     commitOrRollbackOf(req.GetResolution()),
		FromTransactionCheck: req.GetSource() == v2.TransactionSource_SOURCE_SERVER_CHECK,
		MsgID:                req.GetMessageId(),
		TransactionID:        id,
		Topic:                topic,
	}
	if c := connOf(ctx); c != nil && c.peer.IsValid() {
		r.Peer = c.peer.String()
	}
	_, err = await(ctx, func(done func(struct{}, error)) {
		s.core.EndTransaction(r, func(err error) { done(struct{}{}, err) })
	})
	return answer(statusOfCore(OpEndTransaction, err))
}

// commitOrRollbackOf is END_TRANSACTION's commitOrRollback for a v2
// resolution (the proxy's TransactionStatus: COMMIT, ROLLBACK, else
// UNKNOWN).
func commitOrRollbackOf(r v2.TransactionResolution) int32 {
	switch r {
	case v2.TransactionResolution_COMMIT:
		return codec.SysFlagTransactionCommit
	case v2.TransactionResolution_ROLLBACK:
		return codec.SysFlagTransactionRollback
	}
	return codec.SysFlagTransactionNotType
}
