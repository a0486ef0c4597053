package client

import "github.com/popshim/popshim/codec"

// HeadHandler receives the response to a request sent with
// Conn.InvokePreparedHead: only its head (code, opaque, flag, remark),
// decoded by codec.CanonicalResponseHead (or copied out of DecodeFrame's
// Command for other reply shapes) without building a *codec.Command,
// the ext map or the body. It is for load generators that check only the
// response code of each reply (the ACK stream of popshim bench).
type HeadHandler interface {
	// HandleHead gets the response head and a nil error, or a zero head and
	// the error that closed the client (net.ErrClosed after Close). It is
	// called exactly once per request, on the client's reader goroutine or
	// on the goroutine that closed the client, and must not block.
	HandleHead(head codec.ResponseHead, err error)
}

// pendingEntry is one in-flight request: its opaque and whichever of cb or
// head the caller gave (exactly one is set).
type pendingEntry struct {
	opaque int32
	cb     Callback
	head   HeadHandler
}

func (e *pendingEntry) used() bool { return e.cb != nil || e.head != nil }

// fail completes the entry with err.
func (e *pendingEntry) fail(err error) {
	if e.cb != nil {
		e.cb(nil, err)
	} else {
		e.head.HandleHead(codec.ResponseHead{}, err)
	}
}

// pendingRingSize is the number of ring slots of a pendingTable (a power of
// two): 32 bytes each, 32 KiB per client.
const pendingRingSize = 1024

// pendingTable holds the in-flight requests of a Conn by opaque. The
// client assigns opaques consecutively (nextOpaque), so with fewer than
// pendingRingSize requests in flight, request opaque sits alone in ring
// slot opaque mod pendingRingSize: registering and completing it is an
// index, not a hash-map insert and delete. A request whose slot is still
// held by an older one (an unanswered request, or a deeper pipeline) goes
// to the overflow map, so any number of requests stays correct. Not safe for
// concurrent use: the Conn's mu guards it.
type pendingTable struct {
	ring []pendingEntry
	over map[int32]pendingEntry
	n    int // entries in ring and over
}

func newPendingTable() pendingTable {
	return pendingTable{ring: make([]pendingEntry, pendingRingSize)}
}

func (t *pendingTable) slot(opaque int32) *pendingEntry {
	return &t.ring[uint32(opaque)&(pendingRingSize-1)]
}

// put registers e under e.opaque, which must not be registered already.
func (t *pendingTable) put(e pendingEntry) {
	t.n++
	if s := t.slot(e.opaque); !s.used() {
		*s = e
		return
	}
	if t.over == nil {
		t.over = make(map[int32]pendingEntry)
	}
	t.over[e.opaque] = e
}

// take removes and returns the entry of opaque, if registered.
func (t *pendingTable) take(opaque int32) (pendingEntry, bool) {
	if s := t.slot(opaque); s.used() && s.opaque == opaque {
		e := *s
		*s = pendingEntry{}
		t.n--
		return e, true
	}
	if e, ok := t.over[opaque]; ok {
		delete(t.over, opaque)
		t.n--
		return e, true
	}
	return pendingEntry{}, false
}

// drain removes and returns every entry.
func (t *pendingTable) drain() []pendingEntry {
	out := make([]pendingEntry, 0, t.n)
	for i := range t.ring {
		if t.ring[i].used() {
			out = append(out, t.ring[i])
			t.ring[i] = pendingEntry{}
		}
	}
	for _, e := range t.over {
		out = append(out, e)
	}
	t.over, t.n = nil, 0
	return out
}
