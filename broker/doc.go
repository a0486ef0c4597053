// Package broker is popshim's core: the broker's operations as a Go API
// below every protocol, so the remoting adapter (handler/) and the gRPC
// endpoint run the same checks, the same group-commit writer and the same
// long-poll parking.
//
// # Contract of an operation
//
// An operation is a method of Broker taking a typed request and a
// completion callback, for example
//
//	func (b *Broker) Ack(r AckRequest, done func(error))
//
// done is called exactly once: on the caller's goroutine when the request
// is refused before anything was queued (validation against in-memory
// state), else later on a reader goroutine or the writer's completer
// goroutine, after the mutation is durable (fsynced) or failed. The caller
// never waits: an event loop calls an operation and returns. done must not
// block. A refusal or failure is an *Error carrying the RocketMQ response
// code and the remark a Java broker gives (ErrorOf maps any error to one);
// protocol adapters translate it (remoting: the response code and remark;
// gRPC: the v2 status code).
//
// Long polls (POP, PULL, NOTIFICATION) carry the adapter's connection id
// (unique across protocols, see ConnClosed) so a closed connection releases
// them at once, parked or waiting for reply room.
//
// # What it owns
//
// The POP read path (Service: the reader pool where POP, PULL,
// NOTIFICATION, CONSUMER_SEND_MSG_BACK and admin reads run, never on an
// event loop or the writer; the per-(group, topic, queue) try-locks; the
// POP job that reads from the consumer offset, filters by tag, builds
// checkpoints and the offset advance, submits them to the writer and
// answers when durable or parks in broker/longpoll), receipt-handle checks
// (CheckReceipt), orderly leases (pop_order*.go, ack_order.go, change_order.go, the rules in
// broker/orderly), the settings derived from the configuration, the
// message-flow Prometheus series, and the wiring of the subsystems: topic
// and subscription-group tables (broker/meta), the client registry
// (broker/clients), long polling (broker/longpoll), revive (broker/revive),
// timers (broker/timer) and transactional messages (transaction*.go: the
// half-message entry point of SEND and END_TRANSACTION; the check-back loop
// in broker/transaction).
//
// The produce path (send*.go): Send validates a message or batch, routes
// it (auto-created topic, retry → DLQ, delay level or timer → timer
// entry) and stores it with one produce-lane op; SendBack stores a
// consumed message's retry or DLQ copy. Reply (reply*.go) is the replier's
// half of request-reply: it pushes the reply to the requester through the
// ReplyPusher an adapter installs and stores it. Timer deletion
// (timer_delete.go: TIMER_DEL_UNIQKEY markers, recall handles) and Recall
// (recall.go, RECALL_MESSAGE) cancel pending timer messages.
//
// It also owns the client-registration, assignment and metadata
// operations: Heartbeat (with RefreshHeartbeat for a protocol's fast path
// of an unchanged repeat), UnregisterClient, ConsumerList, Assignment and
// Route (over the RouteSource an adapter installs for the name servers of
// --namesrv-addr), SetMessageRequestMode, CreateTopic(s) and DeleteTopic
// (a created topic is registered through the adapter's topic registrar
// before the answer), UpdateSubscriptionGroups and
// DeleteSubscriptionGroups. Read-only admin codes read the exported tables
// directly.
//
// Orderly PULL consumers' queue locks: LockBatch and UnlockBatch over the
// rebalance lock table (broker/locks, rebalance_lock.go). Calls an admin
// addresses to a consumer: ConsumerChannel finds the client and
// PrepareDirectConsume the message; the adapter forwards them
// (client_call.go), through another adapter's ClientCaller when that one
// owns the client's connection (CallClient, client_caller.go: a v5
// consumer of the gRPC endpoint asked by a remoting admin).
//
// # What it must not do
//
// Import remoting/, gnet, grpc or handler/, or see a codec.Command: frames
// and RPCs are the adapters' business. Block a caller: no RocksDB read or
// write, no wait on the writer or a long poll on the calling goroutine.
package broker
