package handler_test

// Long polling with TAG subscriptions: a message that arrives is handed to
// a parked POP whose filter matches it, whatever else is parked on the
// queue and in whichever order, and non-matching POPs are not woken.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// lpPollMillis is the pollTime of the parked POPs: far longer than
// lpAnswerWait, so an answer within that bound came from a wake-up, not
// from the poll ending.
const lpPollMillis = 60_000

// lpAnswerWait bounds the wait for a woken POP's answer (a hang guard well
// below lpPollMillis, not a latency threshold).
const lpAnswerWait = 15 * time.Second

// lpParked is one parked POP of a test.
type lpParked struct {
	name, group, exp string
	p                pending
}

// lpPark sends a long-polling POP and waits until it is parked (so parking
// order is the order of the calls).
func lpPark(t *testing.T, h *harness, name, group, exp string) *lpParked {
	t.Helper()
	before := h.b().Polls.Stats().Parks
	p := asyncPop(t, h.dial(), popArgs{group: group, topic: "T", queueID: 0, max: 4, invisible: 30000,
		poll: lpPollMillis, exp: exp})
	eventually(t, func() bool { return h.b().Polls.Stats().Parks > before }, "%s not parked", name)
	return &lpParked{name: name, group: group, exp: exp, p: p}
}

// lpStart starts a stack with topic T (one queue) whose queue is known to
// each group in groups: a warm-up message is sent and consumed, so each
// group has a committed offset and the registry sizes wake-ups.
func lpStart(t *testing.T, groups ...string) *harness {
	t.Helper()
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "warm-up", sendOpts{tag: "X"})
	for _, g := range groups {
		_, ms := pop(t, c, popArgs{group: g, topic: "T", queueID: 0, max: 1, invisible: 30000})
		require.Equal(t, []string{"warm-up"}, bodies(ms))
	}
	return h
}

// lpDeliver sends one message with tag and checks that exactly the POP
// named want answers, with that message, after exactly one POP execution;
// every other POP stays parked.
func lpDeliver(t *testing.T, h *harness, parked []*lpParked, tag, want string) []*lpParked {
	t.Helper()
	runs := h.b().Polls.Stats().PopRuns
	body := "m-" + tag + "-" + want
	send(t, h.dial(), "T", 0, body, sendOpts{tag: tag})
	var rest []*lpParked
	var got *lpParked
	for _, q := range parked {
		if q.name == want {
			got = q
			continue
		}
		rest = append(rest, q)
	}
	require.NotNil(t, got, "no parked POP named %s", want)
	select {
	case r := <-got.p.ch:
		require.Equal(t, codec.Success, r.Code, "%s: %s", want, r.Remark)
		require.Equal(t, []string{body}, bodies(parsePop(t, r)))
	case <-time.After(lpAnswerWait):
		t.Fatalf("%s (exp %q) not answered while its poll had %d ms to run; committed offset %d",
			want, got.exp, lpPollMillis, committedOffset(h, got.group, "T", 0))
	}
	for _, q := range rest {
		if r, ok := q.p.answered(); ok {
			t.Fatalf("%s (exp %q) answered %d %q for a %q message", q.name, q.exp, r.Code, r.Remark, tag)
		}
	}
	require.Equal(t, runs+1, h.b().Polls.Stats().PopRuns, "POP executions for one %q message", tag)
	require.Equal(t, int64(len(rest)), h.b().Polls.ParkedCount())
	return rest
}

// TestLP_TagWakeMatchingPop: POPs of one consumerGroup with different TAG
// subscriptions park on one queue in various orders; each message is
// answered by the earliest-parked POP whose filter matches, at once, and
// by one POP execution (the others are not woken).
func TestLP_TagWakeMatchingPop(t *testing.T) {
	cases := []struct {
		order string   // parking order: one letter per POP, its tag
		sends []string // tags sent, one message each
		want  []string // POP answering each send
	}{
		{"AB", []string{"B", "A"}, []string{"B1", "A1"}},
		{"BA", []string{"B", "A"}, []string{"B1", "A1"}},
		{"AAB", []string{"B"}, []string{"B1"}},
		{"AABB", []string{"B", "B", "A"}, []string{"B1", "B2", "A1"}},
		{"ABAB", []string{"A", "B", "A", "B"}, []string{"A1", "B1", "A2", "B2"}},
		{"BBBA", []string{"A", "B"}, []string{"A1", "B1"}},
	}
	for _, tc := range cases {
		t.Run(tc.order, func(t *testing.T) {
			h := lpStart(t, "G")
			var parked []*lpParked
			seen := map[byte]int{}
			for i := range len(tc.order) {
				tag := tc.order[i]
				seen[tag]++
				name := fmt.Sprintf("%c%d", tag, seen[tag])
				parked = append(parked, lpPark(t, h, name, "G", string(tag)))
			}
			for i, tag := range tc.sends {
				parked = lpDeliver(t, h, parked, tag, tc.want[i])
			}
			require.Equal(t, int64(1+len(tc.sends)), committedOffset(h, "G", "T", 0))
		})
	}
}

// TestLP_TagWakeSkipsNonMatchingGroups: a group whose parked POPs do not
// match the new message is not woken at all; the matching group's POP
// takes the message.
func TestLP_TagWakeSkipsNonMatchingGroups(t *testing.T) {
	h := lpStart(t, "GA", "GB")
	parked := []*lpParked{
		lpPark(t, h, "A1", "GA", "A"),
		lpPark(t, h, "B1", "GB", "B"),
		lpPark(t, h, "A2", "GA", "A || C"),
	}
	parked = lpDeliver(t, h, parked, "B", "B1")
	parked = lpDeliver(t, h, parked, "C", "A2")
	require.Equal(t, []string{"A1"}, names(parked))
}

// TestLP_TagWakeUnfilteredPeer: in a group mixing a filtered POP and a
// subscribe-all POP, the subscribe-all one takes what the filtered one
// does not match, and a message the filtered one matches goes to the
// earliest-parked of them.
func TestLP_TagWakeUnfilteredPeer(t *testing.T) {
	h := lpStart(t, "G")
	parked := []*lpParked{
		lpPark(t, h, "A1", "G", "A"),
		lpPark(t, h, "ALL1", "G", "*"),
		lpPark(t, h, "ALL2", "G", ""),
	}
	parked = lpDeliver(t, h, parked, "B", "ALL1")
	parked = lpDeliver(t, h, parked, "A", "A1")
	parked = lpDeliver(t, h, parked, "Z", "ALL2")
	require.Empty(t, parked)
}

func names(ps []*lpParked) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.name
	}
	return out
}
