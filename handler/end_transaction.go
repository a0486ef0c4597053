package handler

// END_TRANSACTION (37), adapter of broker.Broker.EndTransaction (behaviour
// and codes in broker/transaction_end.go).
//
// Header (codec.EndTransactionRequestHeader,
// EndTransactionRequestHeader.java): producerGroup, tranStateTableOffset,
// commitLogOffset, commitOrRollback, msgId (required), topic,
// fromTransactionCheck, transactionId, bname. The request's remark (the
// producer's exception text, if any) is logged.
//
// Remoting specifics: producers send it oneway (endTransactionOneway), so
// usually nothing is answered; a request that is not oneway is answered as
// a Java broker does: SUCCESS or the refusal's code and remark, and
// nothing at all for commitOrRollback 0 (EndTransactionProcessor returns
// null). A header that does not decode → SYSTEM_ERROR (1) naming the field.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleEndTransaction(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeEndTransactionRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	r := broker.EndTransactionRequest{
		ProducerGroup: h.ProducerGroup, TranStateTableOffset: h.TranStateTableOffset, CommitLogOffset: h.CommitLogOffset,
		CommitOrRollback: h.CommitOrRollback, FromTransactionCheck: h.FromTransactionCheck,
		MsgID: h.MsgID, TransactionID: h.TransactionID, Topic: h.Topic, Remark: req.Remark,
	}
	if a := c.RemoteAddr(); a != nil {
		r.Peer = a.String()
	}
	unknown := h.CommitOrRollback == codec.SysFlagTransactionNotType
	b.EndTransaction(r, func(err error) {
		switch {
		case err != nil:
			reply.Err(c, req, err)
		case !unknown:
			reply.Code(c, req, codec.Success, "")
		}
	})
}
