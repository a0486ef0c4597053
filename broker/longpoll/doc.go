// Package longpoll owns the long-poll registry: POP, PULL (suspend bit) and
// NOTIFICATION requests that found nothing park here until new messages
// arrive in a queue they wait for, a held queue lock is released, their
// deadline passes (capped at MaxPollMillis) or their connection closes.
// It also keeps the taker table (POP requests being served, so a peer of
// the same group never scans past messages they want), the tag-aware
// wake-up machinery (TagSource, PendingTag) and the filter of a
// subscription (Filter: TAG, or an SQL92 selector compiled by
// broker/filter).
//
// Callers and goroutines: handlers on the gnet event loops park and
// register takers (Snapshot, Park, AddTaker); the reader goroutines of the
// POP path park, wake (WakeSome) and ask what peers want (WantsOf); the
// batch writer's append listener calls Appended; a POP or PULL waiting for
// reply room waits through Wait, so that, like a parked poll, it ends when
// its connection does; connection-close hooks call DropConn; Close runs
// once at shutdown. Every method is safe from any
// goroutine and never blocks beyond short mutexes; Poll callbacks run on
// the waking goroutine after the poll left the registry and must not
// block. Tag probes run on a reader through TagSource.SubmitProbe.
//
// It must not read the store itself (TagSource does), answer the network,
// or import handler/ or another subsystem's package. Per-topic state is
// sharded into fixed stripes and pruned as waiters leave, so memory follows
// the parked requests, not the topics ever seen.
package longpoll
