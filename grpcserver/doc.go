// Package grpcserver owns popshim's RocketMQ 5 gRPC endpoint: the service
// apache.rocketmq.v2.MessagingService that the v5 SDKs (Java, Go, C++,
// Python, Node, Rust, C#) call directly, with no rocketmq-proxy in between.
//
// It decodes each RPC, turns the v2 protobuf messages into the broker
// core's typed requests, calls the core (broker.Broker: Route, Heartbeat,
// Send, Pop, Ack, ChangeInvisible, SendBack, EndTransaction, Recall,
// UnregisterClient, ConnClosed) and writes the replies (unary responses,
// the ReceiveMessage stream, the Telemetry stream). One file per concern:
// route.go (QueryRoute, QueryAssignment, the endpoint rule for several
// brokers), heartbeat.go, send.go, receive*.go (long polling bounded by
// the call's deadline, the stream shape, the return of messages a receive
// could not deliver), ack.go (AckMessage, ChangeInvisibleDuration),
// forward.go (ForwardMessageToDeadLetterQueue), transaction.go
// (EndTransaction), txn_checker.go (the core's transaction checks relayed
// to v5 producers as RecoverOrphanedTransactionCommand), client_call.go
// (mqadmin's GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY
// relayed to v5 consumers as PrintThreadStackTraceCommand and
// VerifyMessageCommand, their answers turned into the remoting reply
// bodies), recall.go
// (RecallMessage), leases.go (auto-renew of the messages push consumers
// hold), service.go (Telemetry, NotifyClientTermination, client and
// connection life), auth.go (ACL 2.0 over gRPC metadata through
// auth.Verifier.CheckSigned), metrics.go.
//
// It also owns the listener (plaintext, TLS, or both on one port told
// apart by the first byte), the grpc-go server options (keepalive, message
// size), the per-client Settings handshake, connection ids (conns.go), and
// the conversions between v2 messages and popshim's codec types
// (convert_*.go) including the RocketMQ response code → v2.Code table
// (status.go, core_status.go).
//
// It must not implement a broker operation itself (storing, popping,
// acking, changing invisible time, deciding a transaction, choosing what a
// route contains beyond shaping the answer): those belong to the
// protocol-neutral core. Its own state is per client and per connection
// and lives in memory (Settings, leases); it keeps no table of
// transactions (a transaction id carries the half's offsets). It must not import remoting/ or handler/, and it must not
// generate its own copy of the RocketMQ protos: it uses the generated
// package the Go v5 client ships
// (github.com/apache/rocketmq-clients/golang/v5/protocol/v2), because
// protobuf-go refuses two registrations of the same apache.rocketmq.v2
// names in one binary.
package grpcserver
