package namesrv

// The route cache: topic routes as the external name servers
// (--namesrv-addr) know them, the core's broker.RouteSource for
// QUERY_ASSIGNMENT (400), which assigns over every broker of a topic (broker/.../topic/TopicRouteInfoManager.java
// keeps the same cache in a Java broker).
//
// Behaviour:
//   - A topic enters the cache on first use: Lookup misses, and one fetch
//     (GET_ROUTEINFO_BY_TOPIC, 105) runs on its own goroutine; every caller
//     that misses while it runs waits for the same fetch (one fetch per
//     topic in flight). A fetch tries the name servers in turn, each over a
//     long-lived connection, within FetchTimeout in all.
//   - Cached topics are fetched again every refresh interval (default
//     DefaultRouteRefresh, 5 s; a Java broker uses 30 s,
//     loadBalancePollNameServerInterval). The shorter interval lets
//     consumers stop being assigned a killed broker's queues soon after the
//     name server drops it (the name server itself notices a dead broker
//     when its connection closes, or after 120 s without registration).
//     While a refresh runs, Lookup keeps answering the previous route.
//   - TOPIC_NOT_EXIST (17) drops the topic from the cache; the next Lookup
//     fetches again. Transport errors and timeouts keep a cached route
//     until a later refresh succeeds. A topic nobody looked up for
//     routeIdleEvict (10 min) is dropped, so the cache holds the topics in
//     use, not every topic ever asked for.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// DefaultRouteRefresh is how often cached routes are fetched again.
const DefaultRouteRefresh = 5 * time.Second

// FetchTimeout bounds one fetch of one topic's route, over all name
// servers together.
const FetchTimeout = 3 * time.Second

// routeIdleEvict is how long a cached topic nobody looks up stays cached.
const routeIdleEvict = 10 * time.Minute

// Result errors of the route cache.
var (
	// errNoRoute: every name server failed (or there is none).
	errNoRoute = errors.New("namesrv: no name server answered")
	// errCacheClosed: Lookup after Close, or a fetch cut short by it.
	errCacheClosed = errors.New("namesrv: route cache closed")
)

// RouteResult is the outcome of a route fetch: the core's
// broker.RouteResult (Route, Found, Err), so that RouteCache is the
// core's broker.RouteSource.
type RouteResult = broker.RouteResult

// routeEntry is one cached topic. REQUIRES: RouteCache.mu held for every
// field.
type routeEntry struct {
	res      RouteResult // last answer; Found false until the first success
	have     bool        // res holds a route Lookup may answer with
	usedAt   time.Time
	inflight bool
	waiters  []func(RouteResult)
}

// RouteCache caches topic routes fetched from external name servers. Build
// with NewRouteCache, Start once, Close once. Lookup is safe on the gnet
// event loop: it never waits on the network. Its fetches run on their own
// goroutines; the refresh loop on one more.
type RouteCache struct {
	addrs   []string
	refresh time.Duration
	timeout time.Duration
	log     zerolog.Logger
	now     func() time.Time

	ctx    context.Context // cancelled by Close: fetches stop at once
	cancel context.CancelFunc
	wg     sync.WaitGroup // refresh loop and fetch goroutines

	mu      sync.Mutex
	entries map[string]*routeEntry  // REQUIRES: mu held
	clients map[string]*client.Conn // REQUIRES: mu held
	next    int                     // REQUIRES: mu held. Name server to try first.
	closed  bool                    // REQUIRES: mu held
}

// NewRouteCache returns a cache over the name servers addrs (host:port)
// that refreshes cached routes every refresh (≤ 0: DefaultRouteRefresh)
// and gives one fetch at most timeout (≤ 0: FetchTimeout).
func NewRouteCache(addrs []string, refresh, timeout time.Duration, log zerolog.Logger) *RouteCache {
	if refresh <= 0 {
		refresh = DefaultRouteRefresh
	}
	if timeout <= 0 {
		timeout = FetchTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &RouteCache{
		addrs: addrs, refresh: refresh, timeout: timeout, now: time.Now,
		log: log.With().Str("component", "routes").Logger(),
		ctx: ctx, cancel: cancel,
		entries: make(map[string]*routeEntry),
		clients: make(map[string]*client.Conn, len(addrs)),
	}
}

// Start launches the refresh loop.
func (r *RouteCache) Start() {
	r.wg.Add(1)
	go r.loop()
}

// Lookup returns topic's cached route and true, or, on a miss, false and
// arranges for done to be called exactly once, on a fetch goroutine, with
// the fetch's result (at most the fetch timeout later; at once with an
// error after Close). done is not called when Lookup returns true. Any
// goroutine, including the event loop; done must not block for long.
func (r *RouteCache) Lookup(topic string, done func(RouteResult)) (RouteResult, bool) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		done(RouteResult{Err: errCacheClosed})
		return RouteResult{}, false
	}
	e := r.entries[topic]
	if e == nil {
		e = &routeEntry{}
		r.entries[topic] = e
	}
	e.usedAt = r.now()
	if e.have {
		res := e.res
		r.mu.Unlock()
		return res, true
	}
	e.waiters = append(e.waiters, done)
	start := !e.inflight
	e.inflight = true
	if start {
		r.wg.Add(1)
	}
	r.mu.Unlock()
	if start {
		go r.fetchAndSettle(topic)
	}
	return RouteResult{}, false
}

// loop refreshes every cached topic each refresh interval.
func (r *RouteCache) loop() {
	defer r.wg.Done()
	tick := time.NewTicker(r.refresh)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		now := r.now()
		var topics []string
		r.mu.Lock()
		for t, e := range r.entries {
			switch {
			case e.inflight:
			case now.Sub(e.usedAt) > routeIdleEvict:
				delete(r.entries, t)
			default:
				e.inflight = true
				r.wg.Add(1)
				topics = append(topics, t)
			}
		}
		r.mu.Unlock()
		for _, t := range topics {
			r.fetchAndSettle(t) // sequential: a refresh round is a few small requests
		}
	}
}

// fetchAndSettle fetches topic, updates its entry and calls its waiters.
// The caller set e.inflight and added to r.wg.
func (r *RouteCache) fetchAndSettle(topic string) {
	defer r.wg.Done()
	res := r.fetch(topic)
	r.mu.Lock()
	e := r.entries[topic]
	var waiters []func(RouteResult)
	if e != nil {
		waiters, e.waiters = e.waiters, nil
		e.inflight = false
		switch {
		case res.Found:
			e.res, e.have = res, true
		case res.Err == nil: // TOPIC_NOT_EXIST: drop it
			delete(r.entries, topic)
		case !e.have && len(waiters) > 0:
			delete(r.entries, topic) // nothing to keep; the next Lookup retries
		}
	}
	r.mu.Unlock()
	if res.Err != nil {
		r.log.Debug().Err(res.Err).Str("topic", topic).Msg("route fetch failed")
	}
	for _, w := range waiters {
		w(res)
	}
}

// fetch asks the name servers for topic's route, one after another from a
// rotating start, until one answers SUCCESS or TOPIC_NOT_EXIST, all within
// r.timeout.
func (r *RouteCache) fetch(topic string) RouteResult {
	ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
	defer cancel()
	r.mu.Lock()
	first := r.next
	r.next++
	r.mu.Unlock()
	err := errNoRoute
	for i := range r.addrs {
		ns := r.addrs[(first+i)%len(r.addrs)]
		req := codec.NewRequest(codec.RequestGetRouteInfoByTopic, 0, map[string]string{"topic": topic}, nil)
		resp, ierr := r.invoke(ctx, ns, req)
		switch {
		case ierr != nil:
			err = fmt.Errorf("namesrv %s: %w", ns, ierr)
		case resp.Code == codec.TopicNotExist:
			return RouteResult{}
		case resp.Code != codec.Success:
			err = fmt.Errorf("namesrv %s: code %d %s", ns, resp.Code, resp.Remark)
		default:
			route, derr := codec.DecodeTopicRouteData(resp.Body)
			if derr != nil {
				err = fmt.Errorf("namesrv %s: %w", ns, derr)
				continue
			}
			return RouteResult{Route: route, Found: true}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return RouteResult{Err: err}
}

// invoke sends req to name server addr over its long-lived connection,
// dialling when there is none or it closed.
func (r *RouteCache) invoke(ctx context.Context, addr string, req *codec.Command) (*codec.Command, error) {
	r.mu.Lock()
	c := r.clients[addr]
	r.mu.Unlock()
	if c != nil && isDone(c) {
		c = nil
	}
	if c == nil {
		l := r.log
		nc, err := client.DialContext(ctx, addr, client.Options{Log: &l})
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			_ = nc.Close()
			return nil, errCacheClosed
		}
		if old := r.clients[addr]; old != nil && !isDone(old) {
			// Another fetch dialled meanwhile: use its connection.
			r.mu.Unlock()
			_ = nc.Close()
			c = old
		} else {
			r.clients[addr] = nc
			r.mu.Unlock()
			c = nc
		}
	}
	return c.Invoke(ctx, req)
}

// Close stops the refresh loop and every fetch (their waiters get an
// error), waits for them and closes the connections. Idempotent.
func (r *RouteCache) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for addr, c := range r.clients {
		_ = c.Close()
		delete(r.clients, addr)
	}
}

// isDone reports whether client c has closed.
func isDone(c *client.Conn) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}
