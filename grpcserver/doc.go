// Package grpcserver owns popshim's RocketMQ 5 gRPC endpoint: the service
// apache.rocketmq.v2.MessagingService that the v5 SDKs (Java, Go, C++,
// Python, Node, Rust, C#) call directly, with no rocketmq-proxy in between.
//
// It decodes each RPC, turns the v2 protobuf messages into the broker core's
// typed requests, calls the core, and writes the replies (unary responses,
// the ReceiveMessage stream, the Telemetry stream). It owns the listener
// (plaintext, TLS, or both on one port told apart by the first byte), the
// grpc-go server options (keepalive, message size), the per-client Settings
// handshake, and the conversions between v2 messages and popshim's codec
// types (convert_*.go) including the RocketMQ response code → v2.Code table
// (status.go).
//
// It must not implement a broker operation itself (storing, popping, acking,
// changing invisible time, routing decisions beyond shaping the answer): those
// belong to the protocol-neutral core. It must not import remoting/ or
// handler/, and it must not generate its own copy of the RocketMQ protos: it
// uses the generated package the Go v5 client ships
// (github.com/apache/rocketmq-clients/golang/v5/protocol/v2), because
// protobuf-go refuses two registrations of the same apache.rocketmq.v2 names
// in one binary.
package grpcserver
