// Package popsvc owns the POP read path that is not one request code: the
// reader pool (POP, PULL, NOTIFICATION, CONSUMER_SEND_MSG_BACK and admin
// reads run there, never on a gnet event loop or the batch writer), the
// per-(group, topic, queue) try-locks, the POP job (read from the consumer
// offset, filter by tag, build checkpoints and the offset advance, submit
// them to the writer, answer when durable or park in broker/longpoll),
// the store side of tag-aware wake-ups (PendingTags), receipt-handle
// checks for ACK and CHANGE (CheckReceipt), the broker's settings derived
// from the configuration, and the message-flow Prometheus series.
//
// Orderly POP (order.go, order_ack.go): the POP job reads the queue's lease
// (popstore.OrderState) under the queue lock, skips a queue blocked for its
// attemptId, and writes the new lease in its own op, compared on the writer
// with what it read (a lease moved by an ACK or CHANGE meanwhile makes the
// POP run again); ApplyOrderAck / ApplyOrderChange are the writer-side
// steps of orderly ACK, BATCH_ACK and CHANGE; timers wake the requests
// parked on a lease (OrderWakeKey) when it ends. The rules themselves are
// broker/orderly's.
//
// Callers: the POP_MESSAGE handler builds a PopJob on the event loop and
// queues it with SubmitRead; the job runs on a reader goroutine and its
// write completes on the writer's completer goroutine; woken or contended
// jobs re-run through ResubmitRead. ACK, CHANGE_INVISIBLE_TIME and
// BATCH_ACK call CheckReceipt on the event loop (in-memory state only).
// The broker fills a Service's exported fields, calls Start before
// traffic and Close after the long-poll registry closed.
//
// It must not block an event loop, wait on the writer from a reader longer
// than the job's own write, or import handler/ or reach into another
// subsystem's internals (it uses broker/longpoll's and broker/revive's
// exported API and handler/reply's answers).
package popsvc
