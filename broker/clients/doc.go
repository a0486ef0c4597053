// Package clients owns the client registry: the producers and consumers
// that announced themselves with HEART_BEAT (34), per group, with their
// connections, subscriptions and expiry (ClientTable, as RocketMQ's
// ProducerManager and ConsumerManager); the HEART_BEAT bounds and the plan
// of what a decoded heartbeat registers (Limits, PlanHeartbeat); the
// per-connection memory of the last accepted heartbeat behind the
// HEART_BEAT fast path (HeartbeatCache); and the Prometheus collector of
// the client gauges (Collector).
//
// Callers: the core's operations (broker: Heartbeat, UnregisterClient,
// ConsumerList, Assignment, PULL's subscription check) and the remoting
// HEART_BEAT fast path on the gnet event loops, the core's ConnClosed on
// the closing connection's event loop, and the metrics scrape on its own
// goroutine. Every method is a map operation under a mutex with no I/O, so
// it may run on an event loop; the table owns no goroutine (expiry is
// applied lazily).
//
// It must not touch storage or the batch writer, answer the network, or
// import handler/ or another subsystem's package other than broker/meta
// (topic-name rules).
package clients
