package handler_test

// Delay-level and timer messages (broker/timer) over real TCP: each
// property and its boundaries, invisibility before the due time, delivery
// with Java's properties, long-poll wake-up, restart with timers pending.

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// popNow pops up to 32 messages of T queue 0 for group G without waiting.
func popNow(t *testing.T, c *client.Conn) []popped {
	t.Helper()
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
	return ms
}

// metricValue reads a gauge or counter.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	require.NoError(t, m.Write(&d))
	if d.Gauge != nil {
		return d.GetGauge().GetValue()
	}
	return d.GetCounter().GetValue()
}

func prop(m codec.MessageExt, k string) string {
	v, _ := m.Property(k)
	return v
}

func TestTimer_DelayLevelDeliveredAtDue(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	before := h.b().Now()
	sent := send(t, c, "T", 0, "late", sendOpts{tag: "TG", flag: 7, props: map[string]string{
		codec.PropertyDelayTimeLevel: "2", "KEYS": "k1", "user": "u", codec.PropertyUniqClientMessageIDKeyIdx: "UNIQ-1"}})
	require.NotEmpty(t, sent.MsgID)
	require.EqualValues(t, 1, h.b().Store.PendingTimers())

	h.timersNow()
	require.Zero(t, maxOffsetRemote(t, c, "T"), "invisible before due: GET_MAX_OFFSET")
	require.Empty(t, popNow(t, c), "invisible before due: POP")

	h.advance(4 * time.Second) // level 2 is 5 s
	h.timersNow()
	require.Zero(t, maxOffsetRemote(t, c, "T"), "not due after 4 s")
	h.advance(1100 * time.Millisecond)
	h.timersNow()
	require.EqualValues(t, 1, maxOffsetRemote(t, c, "T"))
	require.Zero(t, h.b().Store.PendingTimers())

	ms := popNow(t, c)
	require.Len(t, ms, 1)
	m := ms[0].m
	require.Equal(t, "late", string(m.Body))
	require.EqualValues(t, 7, m.Flag)
	require.Equal(t, "UNIQ-1", m.MsgID(), "msgId (UNIQ_KEY) unchanged")
	require.Equal(t, "TG", prop(m, codec.PropertyTags))
	require.Equal(t, "k1", prop(m, "KEYS"))
	require.Equal(t, "u", prop(m, "user"))
	require.Equal(t, "T", prop(m, codec.PropertyRealTopic))
	require.Equal(t, "0", prop(m, codec.PropertyRealQueueID))
	delay, hasDelay := m.Property(codec.PropertyDelayTimeLevel)
	require.True(t, hasDelay, "DELAY stays on the delivered message: ScheduleMessageService.messageTimeUp serialises the properties before it clears the level (a 5.5.1 broker delivers DELAY=2)")
	require.Equal(t, "2", delay)
	require.GreaterOrEqual(t, m.StoreTimestamp, before+5000, "store timestamp of delivery")
	require.EqualValues(t, 0, m.QueueOffset)
	require.Equal(t, 1.0, metricValue(t, h.b().Metrics.TimerDequeued))
	require.Equal(t, 0.0, metricValue(t, h.b().Metrics.TimingMessages))
	var hm dto.Metric
	require.NoError(t, h.b().Metrics.TimerLateness.Write(&hm))
	require.EqualValues(t, 1, hm.GetHistogram().GetSampleCount())
}

func TestTimer_LevelBoundaries(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "level0", sendOpts{props: map[string]string{codec.PropertyDelayTimeLevel: "0"}})
	require.EqualValues(t, 1, maxOffsetRemote(t, c, "T"), "level 0: no delay")

	send(t, c, "T", 0, "level99", sendOpts{props: map[string]string{codec.PropertyDelayTimeLevel: "99"}})
	h.advance(2*time.Hour - 2*time.Second)
	h.timersNow()
	require.EqualValues(t, 1, maxOffsetRemote(t, c, "T"), "level > N is the last level (2h)")
	h.advance(3 * time.Second)
	h.timersNow()
	require.EqualValues(t, 2, maxOffsetRemote(t, c, "T"))
}

func TestTimer_TimerProperties(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	now := h.b().Now()

	send(t, c, "T", 0, "past", sendOpts{props: map[string]string{codec.PropertyTimerDeliverMS: strconv.FormatInt(now-1000, 10)}})
	require.EqualValues(t, 1, maxOffsetRemote(t, c, "T"), "a time in the past is stored at once")

	over := call(t, c, sendReq("T", 0, []byte("x"), sendOpts{props: map[string]string{codec.PropertyTimerDelaySec: strconv.Itoa(3*24*3600 + 10)}}))
	require.Equal(t, codec.MessageIllegal, over.Code)
	require.Contains(t, over.Remark, "timer message illegal")
	bad := call(t, c, sendReq("T", 0, []byte("x"), sendOpts{props: map[string]string{codec.PropertyTimerDelayMS: "soon"}}))
	require.Equal(t, codec.MessageIllegal, bad.Code)

	deliver := now + 10_000
	send(t, c, "T", 0, "abs", sendOpts{props: map[string]string{codec.PropertyTimerDeliverMS: strconv.FormatInt(deliver, 10)}})
	send(t, c, "T", 0, "ms", sendOpts{props: map[string]string{codec.PropertyTimerDelayMS: "3000"}})
	send(t, c, "T", 0, "sec", sendOpts{props: map[string]string{codec.PropertyTimerDelaySec: "6"}})
	require.EqualValues(t, 3, h.b().Store.PendingTimers())
	h.timersNow()
	require.EqualValues(t, 1, maxOffsetRemote(t, c, "T"))

	h.advance(3100 * time.Millisecond)
	h.timersNow()
	require.EqualValues(t, 2, maxOffsetRemote(t, c, "T"), "TIMER_DELAY_MS=3000 due")
	h.advance(3 * time.Second)
	h.timersNow()
	require.EqualValues(t, 3, maxOffsetRemote(t, c, "T"), "TIMER_DELAY_SEC=6 due")
	h.advance(4 * time.Second)
	h.timersNow()
	require.EqualValues(t, 4, maxOffsetRemote(t, c, "T"), "TIMER_DELIVER_MS due")

	ms := popNow(t, c)
	require.Equal(t, []string{"past", "ms", "sec", "abs"}, bodies(ms))
	abs := ms[3].m
	require.Equal(t, strconv.FormatInt(deliver, 10), prop(abs, codec.PropertyTimerOutMS))
	require.Equal(t, strconv.FormatInt(deliver, 10), prop(abs, codec.PropertyTimerDeliverMS), "Java keeps the timer properties")
	require.Equal(t, "T", prop(abs, codec.PropertyRealTopic))
	require.NotEmpty(t, prop(abs, codec.PropertyTimerDequeueMS))
	require.GreaterOrEqual(t, abs.StoreTimestamp, deliver)
}

func TestTimer_BatchWithDelayRefused(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	body, _ := codec.AppendBatchEntry(nil, &codec.Message{Body: []byte("x")})
	props, _ := codec.EncodeProperties(map[string]string{codec.PropertyDelayTimeLevel: "3"})
	hdr := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "T", QueueID: 0, Batch: true, Properties: props}
	req := codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
	hdr.EncodeV2(req)
	resp := call(t, c, req)
	require.Equal(t, codec.MessageIllegal, resp.Code, "CommitLog refuses a batch with a delay level")
	require.Zero(t, h.b().Store.PendingTimers())
}

func TestTimer_DeliveryWakesLongPoll(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "d", sendOpts{props: map[string]string{codec.PropertyTimerDelayMS: "2000"}})
	parked := invokeAsync(h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 60000, poll: 15000}.request())
	eventually(t, func() bool { return metricValue(t, h.b().Metrics.ParkedPolls) == 1 }, "POP parked")
	h.advance(2100 * time.Millisecond)
	h.timersNow()
	resp := await(t, parked, "parked POP")
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, []string{"d"}, bodies(parsePop(t, resp)))
}

func TestTimer_PendingAcrossRestart(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "r1", sendOpts{props: map[string]string{codec.PropertyDelayTimeLevel: "3"}}) // 10 s
	send(t, c, "T", 0, "r2", sendOpts{props: map[string]string{codec.PropertyTimerDelaySec: "20"}})
	h.restart()
	require.EqualValues(t, 2, h.b().Store.PendingTimers(), "timers durable across restart")
	c = h.dial()
	require.Zero(t, maxOffsetRemote(t, c, "T"))
	h.advance(11 * time.Second)
	h.timersNow()
	require.EqualValues(t, 1, maxOffsetRemote(t, c, "T"))
	h.restart()
	require.EqualValues(t, 1, h.b().Store.PendingTimers())
	c = h.dial()
	h.advance(21 * time.Second)
	h.timersNow()
	require.EqualValues(t, 2, maxOffsetRemote(t, c, "T"))
	h.restart()
	c = h.dial()
	h.advance(time.Hour)
	h.timersNow()
	require.EqualValues(t, 2, maxOffsetRemote(t, c, "T"), "nothing delivered twice")
	require.Equal(t, []string{"r1", "r2"}, bodies(popNow(t, c)))
}

// TestTimer_ViewByOffsetMsgIDBeforeAndAfterDelivery: the offsetMsgId a
// SEND of a delayed message answers finds the message with
// VIEW_MESSAGE_BY_ID (mqadmin queryMsgById) while it waits and after it
// was delivered (a Java broker reads its SCHEDULE_TOPIC_XXXX record
// there; popshim answers the message as stored then).
func TestTimer_ViewByOffsetMsgIDBeforeAndAfterDelivery(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sent := send(t, c, "T", 0, "later", sendOpts{props: map[string]string{codec.PropertyDelayTimeLevel: "1"}})
	_, phys, err := codec.DecodeOffsetMsgID(sent.MsgID)
	require.NoError(t, err)
	view := func(topic string) (*codec.Command, codec.MessageExt) {
		ext := map[string]string{"offset": strconv.FormatInt(phys, 10)}
		if topic != "" {
			ext["topic"] = topic
		}
		resp := call(t, c, codec.NewRequest(codec.RequestViewMessageByID, 0, ext, nil))
		var m codec.MessageExt
		if resp.Code == codec.Success {
			m, _, err = codec.DecodeMessage(resp.Body)
			require.NoError(t, err)
		}
		return resp, m
	}
	resp, m := view("")
	require.Equal(t, codec.Success, resp.Code, "pending: %s", resp.Remark)
	require.Equal(t, "later", string(m.Body))
	require.Equal(t, phys, m.PhysicalOffset)
	resp, _ = view("Other")
	require.Equal(t, codec.SystemError, resp.Code, "another topic's offset")

	h.advance(1100 * time.Millisecond) // level 1 is 1 s
	h.timersNow()
	require.EqualValues(t, 1, maxOffsetRemote(t, c, "T"))
	for _, topic := range []string{"", "T"} {
		resp, m = view(topic)
		require.Equal(t, codec.Success, resp.Code, "delivered: %s", resp.Remark)
		require.Equal(t, "later", string(m.Body))
		require.Equal(t, "T", m.Topic)
		require.EqualValues(t, 0, m.QueueOffset, "the delivered message")
		require.Greater(t, m.PhysicalOffset, phys)
	}
}
