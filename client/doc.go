// Package client owns the client side of the RocketMQ remoting protocol as
// popshim's own clients speak it (popshim send and consume in package
// tools, the benchmark in package bench, name-server registration, tests):
//
//	conn.go, conn_read.go  Dial / DialContext: one TCP (or TLS) connection,
//	                       Conn: Invoke, InvokeAsync, InvokeOneway, prepared
//	                       frames (InvokePreparedAsync, InvokePreparedHead),
//	                       answers to requests the server sends
//	pending.go             the in-flight requests of a Conn by opaque
//	sign.go                request signing as RocketMQ's AclClientRPCHook
//	                       (Sign, SignRequest) and SignedContent, the signed
//	                       content the broker's verifier (auth)
//	                       rebuilds with the same code
//	receipt.go             the receipt handles of a POP_MESSAGE reply
//	                       (ReceiptsFromPop), as the Java client builds them
//
// Why signing lives here: the client defines what it signs, and both the
// signer and the broker's verifier must use one content builder. client
// imports only codec of popshim, so auth can import it without a
// cycle; codec stays about frames and layouts, not keys and MACs.
//
// What it must not do: import a server package (handler/..., broker/...,
// popstore, batch, remoting) or gnet or grocksdb, so a client built on it links
// neither the broker nor RocksDB; TestImports checks this for client, tools
// and bench. Server packages may import client (remoting names Conn and
// Dial for server-side code; auth verifies with SignedContent).
// A Conn is safe for concurrent use; the rest keeps no state.
package client
