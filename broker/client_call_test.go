package broker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

func prepareDirect(t *testing.T, f *brokertest.Fixture, r broker.DirectConsumeRequest) (broker.DirectConsumeTarget, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.DirectConsumeTarget, error)) { f.Broker.PrepareDirectConsume(r, done) })
}

// TestConsumerChannel: the live channel of a clientId in its group (its
// connection id, for the adapter to forward over); not online and too old
// are SYSTEM_ERROR with callConsumer's remarks.
func TestConsumerChannel(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	mustHeartbeat(t, f, consumerHeartbeat("c@1", 11, "GCC"))
	old := consumerHeartbeat("c@old", 12, "GCC")
	old.Version = 61 // V3_1_7
	mustHeartbeat(t, f, old)

	ch, err := f.Broker.ConsumerChannel("GCC", "c@1")
	require.Nil(t, err)
	assert.Equal(t, uint64(11), ch.ConnID)
	assert.Equal(t, "127.0.0.1:40000", ch.RemoteAddr)
	_, err = f.Broker.ConsumerChannel("GCC", "c@2")
	wantCodeRemark(t, err, codec.SystemError, "The Consumer <GCC> <c@2> not online")
	_, err = f.Broker.ConsumerChannel("nobody", "c@1")
	wantCodeRemark(t, err, codec.SystemError, "The Consumer <nobody> <c@1> not online")
	_, err = f.Broker.ConsumerChannel("GCC", "c@old")
	wantCodeRemark(t, err, codec.SystemError, "The Consumer <c@old> Version <V3_1_7> too low to finish, please upgrade it to V3_1_8_SNAPSHOT")
	assert.Equal(t, broker.DefaultClientCallTimeout, f.Broker.ClientCallTimeout())
}

// TestPrepareDirectConsume: the stored record the offsetMsgId names and
// the fields a Java broker adds (brokerName, topicSysFlag, groupSysFlag);
// refusals for a bad id, a missing message and a client not online.
func TestPrepareDirectConsume(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TDC", 2)
	res := mustSend(t, f, sendReq("TDC", 1, "to consume", ""))
	mustHeartbeat(t, f, consumerHeartbeat("c@1", 21, "GDC"))

	tg, err := prepareDirect(t, f, broker.DirectConsumeRequest{ConsumerGroup: "GDC", ClientID: "c@1", MsgID: res.OffsetMsgID, Topic: "TDC"})
	require.NoError(t, err)
	assert.Equal(t, uint64(21), tg.Channel.ConnID)
	assert.Equal(t, map[string]string{"brokerName": brokertest.BrokerName, "topicSysFlag": "0", "groupSysFlag": "0"}, tg.Fields)
	m, _, err := codec.DecodeMessage(tg.Record)
	require.NoError(t, err)
	assert.Equal(t, "TDC", m.Topic)
	assert.Equal(t, "to consume", string(m.Body))

	tg, err = prepareDirect(t, f, broker.DirectConsumeRequest{ConsumerGroup: "GDC", ClientID: "c@1", MsgID: res.OffsetMsgID, Topic: "unknown"})
	require.NoError(t, err)
	assert.NotContains(t, tg.Fields, "topicSysFlag", "an unknown topic adds no topicSysFlag")

	_, err = prepareDirect(t, f, broker.DirectConsumeRequest{ConsumerGroup: "GDC", ClientID: "c@2", MsgID: res.OffsetMsgID})
	wantCodeRemark(t, err, codec.SystemError, "The Consumer <GDC> <c@2> not online")
	_, err = prepareDirect(t, f, broker.DirectConsumeRequest{ConsumerGroup: "GDC", ClientID: "c@1", MsgID: "zz"})
	e := wantCode(t, err, codec.SystemError)
	assert.Contains(t, e.Remark, "invalid msgId zz")
	_, err = prepareDirect(t, f, broker.DirectConsumeRequest{ConsumerGroup: "GDC", ClientID: "c@1",
		MsgID: codec.OffsetMsgID(f.Broker.StoreHost(), 123456789)})
	wantCodeRemark(t, err, codec.SystemError, "can not find message by the offset, 123456789")
}

// TestCallErrors: the remarks the adapter answers for a call that timed
// out (CONSUME_MSG_TIMEOUT) or whose connection went (SYSTEM_ERROR).
func TestCallErrors(t *testing.T) {
	e := broker.CallTimeoutError("G", "c@1", "127.0.0.1:5", broker.DefaultClientCallTimeout)
	assert.Equal(t, codec.ConsumeMsgTimeout, e.Code)
	assert.Equal(t, "consumer <G> <c@1> Timeout: org.apache.rocketmq.remoting.exception.RemotingTimeoutException: "+
		"wait response on the channel </127.0.0.1:5> timeout, 10000(ms)", e.Remark)
	e = broker.CallFailedError("G", "c@1", "127.0.0.1:5")
	assert.Equal(t, codec.SystemError, e.Code)
	assert.Equal(t, "invoke consumer <G> <c@1> Exception: org.apache.rocketmq.remoting.exception.RemotingSendRequestException: "+
		"send request to <127.0.0.1:5> failed", e.Remark)
}
