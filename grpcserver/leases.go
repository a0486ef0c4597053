package grpcserver

import (
	"context"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// Push-consumer leases (the proxy's ReceiptHandleProcessor and
// DefaultReceiptHandleManager). A push consumer receives with auto_renew
// and may take any time to consume; the endpoint keeps the messages
// invisible for it until it acks or nacks them, or goes:
//   - A receive with auto_renew pops with LeasePolicy.Invisible (60 s)
//     and records one lease per delivered message under the client id:
//     (group, real topic, queue id, queue offset) → the current handle.
//     At most MaxPerClient leases per client; messages beyond are not
//     renewed (they come back after 60 s) and counted.
//   - Every ScanInterval (5 s) a lease whose current handle turns visible
//     within RenewAhead (10 s) is renewed with a CHANGE of the core
//     (durable through the writer, so a renewal survives a crash) for the
//     next step of Ladder (1 m, 3 m, 5 m, 10 m, 30 m, then 1 h each time);
//     the lease keeps the new handle. A renewal the core finds stale
//     (acked, revived) or invalid ends the lease; MaxFailures failed
//     renewals in a row end it too. After MaxHold (3 h) since the first
//     delivery, one last CHANGE to the group's retry back-off for the
//     delivery attempt hands the message back (a nack) and the lease ends.
//   - The client's AckMessage, ChangeInvisibleDuration and
//     ForwardMessageToDeadLetterQueue of a leased message use the lease's
//     current handle instead of the one the client holds (its original;
//     the renewals moved the checkpoint) and end the lease. While a
//     renewal of that lease is being written, the client's call waits for
//     it (its completion callback runs it), so the two never race.
//   - When the client goes (NotifyClientTermination, its last connection
//     closed, ClientExpiry without a heartbeat) every lease it holds is
//     released: a CHANGE to ReleaseInvisible (1 s, the proxy's
//     invisibleTimeMillisWhenClear).
//   - At the server's GracefulStop the table is saved in the store and the
//     next start loads it (leases_keep.go): renewals go on across a
//     graceful restart; a client that does not come back within
//     ClientExpiry has its leases released then.
//
// The renew scan and every CHANGE callback take one mutex briefly; the
// receive and ack paths touch only their client's map. After a crash
// (nothing saved) the messages come back when their current invisible
// time ends (at least once).

// LeasePolicy holds the auto-renew rules; DefaultLeasePolicy has the
// proxy's values (ProxyConfig and RenewStrategyPolicy).
type LeasePolicy struct {
	Invisible        time.Duration   // invisible time of an auto-renewed receive (defaultInvisibleTimeMills, 60 s)
	ScanInterval     time.Duration   // how often leases are checked (5 s)
	RenewAhead       time.Duration   // renew when the handle turns visible within this (renewAheadTimeMillis, 10 s)
	Ladder           []time.Duration // successive renewal durations; the last repeats (RenewStrategyPolicy)
	MaxHold          time.Duration   // give up and nack after this since the first delivery (renewMaxTimeMillis, 3 h)
	MaxFailures      int             // failed renewals in a row before a lease is dropped (3)
	MaxPerClient     int             // leases one client may hold
	ReleaseInvisible time.Duration   // invisible time given to released messages (invisibleTimeMillisWhenClear, 1 s)
}

// DefaultLeasePolicy returns the proxy's values and 20,000 leases per
// client (a push consumer holds at most its cache: 1,024 messages by
// default per queue).
func DefaultLeasePolicy() LeasePolicy {
	return LeasePolicy{
		Invisible: 60 * time.Second, ScanInterval: 5 * time.Second, RenewAhead: 10 * time.Second,
		Ladder:  []time.Duration{time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour},
		MaxHold: 3 * time.Hour, MaxFailures: 3, MaxPerClient: 20000, ReleaseInvisible: time.Second,
	}
}

// leaseKey names a delivered message: group, real topic, queue, offset.
type leaseKey struct {
	group, topic string
	queueID      int32
	offset       int64
}

func keyOf(group, topic string, ei codec.ExtraInfo) leaseKey {
	return leaseKey{group: group, topic: ei.RealTopic(topic, group), queueID: ei.QueueID, offset: ei.QueueOffset}
}

// handleUser is what waits for a lease's current handle.
type handleUser func(handle string, ei codec.ExtraInfo)

// lease is one message held by a push consumer. REQUIRES: leases.mu held
// for every field after track published it.
type lease struct {
	group, topic string // the request's group and (original) topic
	handle       string // current handle
	ei           codec.ExtraInfo
	firstPop     int64 // pop time of the first delivery, broker clock ms
	renewals     int
	failures     int
	attempt      int32 // delivery attempt of the delivery
	busy         bool  // a CHANGE of this lease is being written
	ended        bool  // removed from the map while busy: waiters run when it completes
	waiters      []handleUser
}

// leases is the lease table; see the top of this file.
type leases struct {
	pol     LeasePolicy
	core    *broker.Broker
	metrics *Metrics
	log     zerolog.Logger
	// retryDelay gives the back-off of a group for a failed delivery
	// attempt (the give-up nack); nil: ReleaseInvisible.
	retryDelay func(group string, attempt int32) time.Duration

	mu       sync.Mutex
	byClient map[string]map[leaseKey]*lease // REQUIRES: mu held
	count    int                            // REQUIRES: mu held
	closed   bool                           // REQUIRES: mu held

	inflight sync.WaitGroup // CHANGEs issued by the table
}

func newLeases(pol LeasePolicy, core *broker.Broker, m *Metrics, log zerolog.Logger) *leases {
	if pol.ScanInterval <= 0 {
		pol.ScanInterval = DefaultLeasePolicy().ScanInterval
	}
	if len(pol.Ladder) == 0 {
		pol.Ladder = DefaultLeasePolicy().Ladder
	}
	return &leases{pol: pol, core: core, metrics: m, log: log, byClient: map[string]map[leaseKey]*lease{}}
}

// track records a lease for each delivered message of client id.
func (t *leases) track(id, group, topic string, msgs []*v2.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || id == "" {
		return
	}
	m := t.byClient[id]
	if m == nil {
		m = make(map[leaseKey]*lease, len(msgs))
		t.byClient[id] = m
	}
	for _, vm := range msgs {
		h := vm.GetSystemProperties().GetReceiptHandle()
		ei, err := ParseReceiptHandle(h)
		if err != nil {
			continue
		}
		k := keyOf(group, topic, ei)
		if old, ok := m[k]; ok {
			t.endLocked(m, k, old)
		}
		if len(m) >= t.pol.MaxPerClient {
			t.metrics.leaseUntracked()
			continue
		}
		m[k] = &lease{group: group, topic: topic, handle: h, ei: ei, firstPop: ei.PopTime,
			attempt: vm.GetSystemProperties().GetDeliveryAttempt()}
		t.count++
	}
	t.metrics.leasesHeld(t.count)
}

// endLocked removes l from m. REQUIRES: t.mu held.
func (t *leases) endLocked(m map[leaseKey]*lease, k leaseKey, l *lease) {
	if m[k] == l {
		delete(m, k)
		t.count--
	}
	l.ended = true
}

// take ends client id's lease of the message ei names, if it holds one
// for this delivery, and runs use with the handle to act on: the lease's
// current one, else handle itself. use runs on the caller's goroutine, or
// when the lease's renewal in flight completes.
func (t *leases) take(id, group, topic string, ei codec.ExtraInfo, handle string, use handleUser) {
	if h, cur, now := t.takeOrWait(id, group, topic, ei, handle, use); now {
		use(h, cur)
	}
}

// takeOrWait is take returning the handle to act on (now true) instead of
// running use with it; only while the lease's renewal is in flight does
// use run later, when it completes (now false).
func (t *leases) takeOrWait(id, group, topic string, ei codec.ExtraInfo, handle string, use handleUser) (h string, cur codec.ExtraInfo, now bool) {
	k := keyOf(group, topic, ei)
	t.mu.Lock()
	m := t.byClient[id]
	l := m[k]
	// Only the delivery the lease was made for: its first handle, or one
	// the renewals issued.
	if l == nil || (ei.PopTime != l.firstPop && ei.PopTime != l.ei.PopTime) {
		t.mu.Unlock()
		return handle, ei, true
	}
	t.endLocked(m, k, l)
	t.metrics.leasesHeld(t.count)
	if l.busy {
		l.waiters = append(l.waiters, use)
		t.mu.Unlock()
		return "", codec.ExtraInfo{}, false
	}
	h, cur = l.handle, l.ei
	t.mu.Unlock()
	return h, cur, true
}

// renewal is one CHANGE the scan decided on.
type renewal struct {
	id     string
	k      leaseKey
	l      *lease
	d      time.Duration
	giveUp bool
	handle string
	ei     codec.ExtraInfo
}

// scan renews every lease that turns visible within RenewAhead (see the
// top of this file). Background goroutine; tests call it directly after
// moving the core's clock.
func (t *leases) scan() {
	now := t.core.Now()
	var due []renewal
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	for id, m := range t.byClient {
		for k, l := range m {
			if l.busy || l.ei.PopTime+l.ei.InvisibleTime-now > t.pol.RenewAhead.Milliseconds() {
				continue
			}
			r := renewal{id: id, k: k, l: l, handle: l.handle, ei: l.ei}
			if now-l.firstPop >= t.pol.MaxHold.Milliseconds() {
				r.giveUp, r.d = true, t.pol.ReleaseInvisible
				if t.retryDelay != nil {
					r.d = t.retryDelay(l.group, l.attempt)
				}
			} else {
				r.d = t.pol.Ladder[min(l.renewals, len(t.pol.Ladder)-1)]
			}
			l.busy = true
			due = append(due, r)
		}
	}
	t.inflight.Add(len(due))
	t.mu.Unlock()
	for _, r := range due {
		changeHandle(t.core, r.l.group, r.l.topic, r.ei, r.handle, r.d, func(res broker.ChangeResult, err error) {
			t.renewed(r, res, err)
		})
	}
}

// renewed applies the outcome of a renewal (writer completer goroutine or
// the scan's goroutine for a refusal).
func (t *leases) renewed(r renewal, res broker.ChangeResult, err error) {
	defer t.inflight.Done()
	l := r.l
	t.mu.Lock()
	l.busy = false
	end := r.giveUp
	if err == nil {
		if ei, perr := codec.ParseExtraInfo(res.ExtraInfo); perr == nil {
			l.handle, l.ei = res.ExtraInfo, ei
		}
		l.renewals++
		l.failures = 0
	} else {
		l.failures++
		if st := statusOfCore(OpChangeInvisible, err); st.GetCode() == v2.Code_INVALID_RECEIPT_HANDLE || l.failures >= t.pol.MaxFailures {
			end = true
		}
	}
	if end && !l.ended {
		t.endLocked(t.byClient[r.id], r.k, l)
		if m := t.byClient[r.id]; len(m) == 0 {
			delete(t.byClient, r.id)
		}
	}
	waiters := l.waiters
	l.waiters = nil
	h, cur := l.handle, l.ei
	t.metrics.leasesHeld(t.count)
	t.mu.Unlock()
	t.metrics.renewed(r.giveUp, err == nil)
	if err != nil {
		t.log.Debug().Err(err).Str("client", r.id).Str("group", l.group).Int32("queue", r.k.queueID).
			Int64("offset", r.k.offset).Msg("grpc lease renewal failed")
	}
	for _, w := range waiters {
		w(h, cur)
	}
}

// releaseClient releases every lease of client id (see the top of this
// file). Any goroutine.
func (t *leases) releaseClient(id string) {
	t.mu.Lock()
	m := t.byClient[id]
	delete(t.byClient, id)
	var now []*lease
	for k, l := range m {
		t.endLocked(m, k, l)
		if l.busy {
			l.waiters = append(l.waiters, t.releaser(l))
			continue
		}
		now = append(now, l)
	}
	t.metrics.leasesHeld(t.count)
	t.mu.Unlock()
	for _, l := range now {
		t.releaser(l)(l.handle, l.ei)
	}
}

// releaser returns the action that releases lease l's message.
func (t *leases) releaser(l *lease) handleUser {
	return func(h string, ei codec.ExtraInfo) {
		t.inflight.Add(1)
		changeHandle(t.core, l.group, l.topic, ei, h, t.pol.ReleaseInvisible, func(_ broker.ChangeResult, err error) {
			defer t.inflight.Done()
			t.metrics.released(err == nil)
		})
	}
}

// releaseAll releases every lease of every client, stops tracking new
// ones, and waits for the CHANGEs issued so far or for ctx. keep falls
// back to it when the lease table cannot be saved.
func (t *leases) releaseAll(ctx context.Context) {
	t.mu.Lock()
	t.closed = true
	ids := make([]string, 0, len(t.byClient))
	for id := range t.byClient {
		ids = append(ids, id)
	}
	t.mu.Unlock()
	for _, id := range ids {
		t.releaseClient(id)
	}
	_ = waitGroupCtx(ctx, &t.inflight) // ctx's end is the caller's to report
}

// held returns the number of leases, for tests and metrics.
func (t *leases) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count
}
