// Package namesrv owns popshim's name-server role: how this broker
// describes itself in routes and cluster info (Self: every topic routes to
// this broker alone, as master), and the registration loop that keeps it
// registered with external Apache RocketMQ name servers (--namesrv-addr):
// REGISTER_BROKER at start, every --register-interval and within a second
// of a topic-table change, UNREGISTER_BROKER on shutdown (Registrar).
//
// Callers: the name-server request handlers (GET_ROUTEINFO_BY_TOPIC,
// GET_BROKER_CLUSTER_INFO in handler/) call Self's methods on the gnet
// event loops; they are pure and never block. The Registrar runs its own
// goroutine, which owns its remoting client connections; Serve starts it
// and closes it on shutdown.
//
// It must not serve requests itself, touch storage, or import handler/ or
// another subsystem's internals (the topic table is read through the
// Topics interface; handler/meta supplies TopicConfigOf).
package namesrv
