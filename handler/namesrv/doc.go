// Package namesrv owns popshim's name-server role: how this broker
// describes itself in routes and cluster info (Self: every topic routes to
// this broker alone, as master); the registration loop that keeps it
// registered with external Apache RocketMQ name servers (--namesrv-addr):
// REGISTER_BROKER at start, every --register-interval, within a second of a
// topic-table change and at once on RegisterNow (a created topic),
// UNREGISTER_BROKER on shutdown (Registrar); and the cache of the routes
// those name servers hold, which the core's Route and Assignment read
// (RouteCache, installed as the core's broker.RouteSource; its results are
// broker.RouteResult).
//
// Callers: the name-server request handlers (GET_ROUTEINFO_BY_TOPIC,
// GET_BROKER_CLUSTER_INFO in handler/) call Self's methods on the gnet
// event loops; they are pure and never block. RouteCache.Lookup and
// Registrar.RegisterNow are called by the core (broker.Broker's Route,
// Assignment, CreateTopic) on event loops and the writer's completer; they never wait on the network and call back later from
// their own goroutines. The Registrar runs its own goroutine, which owns
// its remoting client connections; the RouteCache runs a refresh goroutine
// and one goroutine per fetch. Serve starts both and closes them on
// shutdown.
//
// It must not serve requests itself, touch storage, or import handler/ or
// another subsystem's internals (the topic table is read through the
// Topics interface; broker/meta supplies TopicConfigOf).
package namesrv
