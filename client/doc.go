// Package client owns the client side of the RocketMQ remoting protocol as
// popshim's own tools use it: request signing as RocketMQ's
// AclClientRPCHook does (Sign, SignRequest; SignedContent is the signed
// content the broker's verifier in handler/auth rebuilds with the same
// code).
//
// What it must not do: import a server package (handler/..., popstore,
// batch) or gnet, so a client built on it links neither the broker nor
// RocksDB (TestImports checks it). Server packages may import it.
package client
