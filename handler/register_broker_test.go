package handler_test

import (
	"context"
	"encoding/json"
	"hash/crc32"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/namesrv"
	"github.com/popshim/popshim/remoting"
	"github.com/popshim/popshim/stack/stacktest"
)

// fakeNamesrv records REGISTER_BROKER / UNREGISTER_BROKER requests.
type fakeNamesrv struct {
	mu   sync.Mutex
	reqs []*codec.Command
	conn []uint64
}

func (f *fakeNamesrv) handle(c remoting.Conn, req *codec.Command) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.conn = append(f.conn, c.ID())
	f.mu.Unlock()
	resp := codec.NewResponse(req, codec.Success, "")
	if req.Code == codec.RequestRegisterBroker {
		resp.SetExt("masterAddr", "")
	}
	_ = c.Reply(resp)
}

func (f *fakeNamesrv) snapshot() ([]*codec.Command, []uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*codec.Command(nil), f.reqs...), append([]uint64(nil), f.conn...)
}

// lastPerm returns the perm of topic and the data-version counter in the
// latest REGISTER_BROKER received, or -1, -1 before any.
func (f *fakeNamesrv) lastPerm(topic string) (int32, int64) {
	regs, _ := f.snapshot()
	for i := len(regs) - 1; i >= 0; i-- {
		var b namesrv.RegisterBrokerBody
		if regs[i].Code == codec.RequestRegisterBroker && json.Unmarshal(regs[i].Body, &b) == nil {
			return b.TopicConfigSerializeWrapper.TopicConfigTable[topic].Perm, b.TopicConfigSerializeWrapper.DataVersion.Counter
		}
	}
	return -1, -1
}

func startFakeNamesrv(t *testing.T) (*fakeNamesrv, string) {
	t.Helper()
	f := &fakeNamesrv{}
	r := remoting.NewRouter()
	r.Handle(codec.RequestRegisterBroker, f.handle)
	r.Handle(codec.RequestUnregisterBroker, f.handle)
	srv := remoting.NewServer(remoting.ServerOptions{Name: "fake-namesrv", Addr: "127.0.0.1:0", EventLoops: 1}, r, zerolog.Nop())
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return f, srv.Addr().String()
}

func TestRegistrarRegistersAndUnregisters(t *testing.T) {
	f, nsAddr := startFakeNamesrv(t)
	cfg := d2Config(t.TempDir())
	cfg.NamesrvAddr = nsAddr
	cfg.RegisterInterval = time.Hour // only the first round and topic changes
	st := stacktest.Start(t, cfg)

	var regs []*codec.Command
	eventually(t, func() bool { regs, _ = f.snapshot(); return len(regs) >= 1 }, "no REGISTER_BROKER")
	first := regs[0]
	require.Equal(t, codec.RequestRegisterBroker, first.Code)
	assert.GreaterOrEqual(t, first.Version, int32(37))
	assert.Equal(t, "broker-d2", first.ExtFields["brokerName"])
	assert.Equal(t, st.BrokerAddr(), first.ExtFields["brokerAddr"])
	assert.Equal(t, "ClusterD2", first.ExtFields["clusterName"])
	assert.Equal(t, "0", first.ExtFields["brokerId"])
	assert.NotEmpty(t, first.ExtFields["haServerAddr"])
	assert.Equal(t, strconv.FormatInt(int64(crc32.ChecksumIEEE(first.Body)&0x7FFFFFFF), 10), first.ExtFields["bodyCrc32"])
	var body namesrv.RegisterBrokerBody
	require.NoError(t, json.Unmarshal(first.Body, &body))
	for _, name := range []string{"TBW102", "ClusterD2", "broker-d2"} {
		assert.Contains(t, body.TopicConfigSerializeWrapper.TopicConfigTable, name)
	}
	firstCounter := body.TopicConfigSerializeWrapper.DataVersion.Counter

	// A new topic is registered without waiting for the period.
	bc := dialAddr(t, st.BrokerAddr())
	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicReg", "2", "2", "6", ""), nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	eventually(t, func() bool {
		regs, _ = f.snapshot()
		var b namesrv.RegisterBrokerBody
		return json.Unmarshal(regs[len(regs)-1].Body, &b) == nil &&
			b.TopicConfigSerializeWrapper.TopicConfigTable["TopicReg"].WriteQueueNums == 2 &&
			b.TopicConfigSerializeWrapper.DataVersion.Counter > firstCounter
	}, "topic change not registered")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, st.Close(ctx))
	regs, conns := f.snapshot()
	last := regs[len(regs)-1]
	assert.Equal(t, codec.RequestUnregisterBroker, last.Code)
	assert.Equal(t, st.BrokerAddr(), last.ExtFields["brokerAddr"])
	for i := range conns {
		assert.Equal(t, conns[0], conns[i], "every registration uses one long-lived connection")
	}
}
