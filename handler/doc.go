// Package handler is the remoting adapter of the broker core: one file per
// request code, named after the Java constant (ack_message.go for
// ACK_MESSAGE, 200051), registered in one table (table.go: RegisterBroker
// for the broker port, RegisterNameServer for the embedded name server;
// remoting.Router panics on a code registered twice). A handler decodes the
// frame's header and body (codec), builds the core's typed request, calls
// the operation of broker.Broker and encodes its result or *broker.Error as
// the response (handler/reply). Codes answered from in-memory tables only
// (the admin GET_* codes, the name-server codes) read the core's exported
// tables and encode the Java bodies here. Requests an admin addresses to a
// consumer (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY) are
// forwarded over the consumer's connection of the same listener
// (call_consumer.go, remoting.Server.Invoke) and its answer relayed.
//
// Broker embeds the core and keeps only what belongs to the remoting
// protocol: the signed-frame verifier (package auth, applied by
// handler/guard), the HEART_BEAT fast path of an unchanged repeat, the
// sampled figures of GET_BROKER_RUNTIME_INFO and VIEW_BROKER_STATS_DATA,
// the UPDATE_BROKER_CONFIG state, and this broker's name-server identity
// and registration (handler/namesrv). Three files send broker → client
// requests over the broker listener for the core: transaction_check.go
// (CHECK_TRANSACTION_STATE, oneway), notify_consumer_ids_changed.go
// (NOTIFY_CONSUMER_IDS_CHANGED, oneway) and reply_push.go
// (PUSH_REPLY_MESSAGE_TO_CLIENT, answered: remoting.Server.Invoke).
//
// Goroutines: handlers run on gnet event loops. They must never block:
// no RocksDB, no waiting on the writer or a long poll; the core answers
// through a callback on another goroutine and the reply is queued on the
// connection (remoting.Conn.Reply). handler must not hold operation logic
// (the core's), start listeners or own the process (package stack).
package handler
