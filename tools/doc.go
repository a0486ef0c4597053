// Package tools holds the smoke-test clients behind `popshim send` and
// `popshim consume`: a producer and a POP consumer small enough to read in
// one sitting, so a newcomer can check a broker without Java.
//
// Both resolve the topic's route through a name server
// (GET_ROUTEINFO_BY_TOPIC, 105), as the Java client does:
//
//	send     route of the topic, or TBW102's when the name server answers
//	         TOPIC_NOT_EXIST (the first SEND auto-creates the topic) ─
//	         SEND_MESSAGE_V2 (310) round-robin over the writable queues,
//	         one line per message: msgId, offsetMsgId, queueId, queueOffset
//	consume  route of the topic (retried until it exists) ─ POP_MESSAGE
//	         (200050) with long polling, queueId -1 or one queue ─
//	         ACK_MESSAGE (200051) of every message, one line per message
//
// Requests go through the remoting client of package client (client.Conn,
// signed by client.SignRequest when an access key is set) and the typed
// headers of package codec; receipt handles are built by
// client.ReceiptsFromPop, the same code the benchmark uses.
//
// What it must not do: tools is a client only. Of popshim it imports only
// client and codec: no handler package, no store, no batch writer, not
// remoting (gnet) and not bench, so it links neither the broker nor RocksDB
// (client's TestImports checks it). It never retries a SEND (a smoke test
// reports what happened instead of hiding it), and its errors say which step
// failed and against which address, so the CLI can print them as they are.
// Every function is called from one goroutine (the CLI's).
package tools
