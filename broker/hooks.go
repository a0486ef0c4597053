package broker

import "sync/atomic"

// hooks hold what a protocol adapter installs in the core after New, for
// the parts of an operation that live in a protocol package the core must
// not import: the routes other name servers hold (SetRouteSource) and the
// registration of a created topic with them (SetTopicRegistrar). Both are
// read on every goroutine that runs an operation, hence atomic.
type hooks struct {
	routes    atomic.Pointer[routeSourceRef]
	registrar atomic.Pointer[func(done func())]
	replies   atomic.Pointer[replyPusherRef] // reply_push.go
	// idsNotifier sends NOTIFY_CONSUMER_IDS_CHANGED (consumer_ids.go).
	idsNotifier atomic.Pointer[consumerIDsNotifierRef]
}

// routeSourceRef boxes a RouteSource for atomic.Pointer.
type routeSourceRef struct{ src RouteSource }

// SetRouteSource makes Route and Assignment read topic routes from src
// (the external name servers of --namesrv-addr; handler/namesrv.RouteCache
// satisfies it); nil: this broker's own topic table alone. Call before
// traffic; any goroutine.
func (b *Broker) SetRouteSource(src RouteSource) {
	if src == nil {
		b.hooks.routes.Store(nil)
		return
	}
	b.hooks.routes.Store(&routeSourceRef{src: src})
}

// routeSource returns the installed RouteSource, or nil.
func (b *Broker) routeSource() RouteSource {
	if r := b.hooks.routes.Load(); r != nil {
		return r.src
	}
	return nil
}

// SetTopicRegistrar installs register, which CreateTopic and CreateTopics
// call once their topics are durable and before they answer: it must
// arrange for done to be called exactly once, without blocking, when the
// name servers of --namesrv-addr hold the new topic table or a bound of
// its own passed (handler/namesrv.Registrar.RegisterNow). nil: answer once
// durable. Call before traffic; any goroutine.
func (b *Broker) SetTopicRegistrar(register func(done func())) {
	if register == nil {
		b.hooks.registrar.Store(nil)
		return
	}
	b.hooks.registrar.Store(&register)
}

// registered calls done once the topics written so far are registered
// with the name servers (at once without a registrar).
func (b *Broker) registered(done func()) {
	if r := b.hooks.registrar.Load(); r != nil {
		(*r)(done)
		return
	}
	done()
}
