package handler_test

// Faults of the store's disk, over real TCP on 127.0.0.1: a full disk
// fails writes without killing the process, SENDs are refused with
// SERVICE_NOT_AVAILABLE until the writer's probe has reopened the store,
// and nothing acknowledged is lost.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore/popstoretest"
	"github.com/popshim/popshim/stack"
)

// metricSum returns the sum of every series of one metric (0 if absent).
func metricSum(t *testing.T, h *harness, name string) float64 {
	t.Helper()
	mfs, err := h.st.Registry.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// bigBody is a 256 KiB body whose first bytes name i.
func bigBody(i int) []byte {
	b := bytes.Repeat([]byte{'x'}, 256<<10)
	copy(b, "msg-"+strconv.Itoa(i)+"-")
	return b
}

// sendBig sends bigBody(i) to T/0 and returns the response.
func sendBig(t *testing.T, c *client.Conn, i int) *codec.Command {
	t.Helper()
	return call(t, c, sendReq("T", 0, bigBody(i), sendOpts{}))
}

// checkStored asserts that every acknowledged message (queue offset →
// body index) is readable with its body.
func checkStored(t *testing.T, h *harness, acked map[int64]int) {
	t.Helper()
	for off, i := range acked {
		recs, _, err := h.b().Store.ReadMessages("T", 0, off, 1, 1<<20)
		require.NoError(t, err)
		require.Len(t, recs, 1, "offset %d", off)
		require.True(t, bytes.Contains(recs[0], bigBody(i)[:16]), "offset %d holds message %d", off, i)
	}
}

// TestDiskFull_RefuseRecoverNoLoss fills the data filesystem (a 64 MiB
// tmpfs) under a running broker: the SEND whose write fails gets
// SYSTEM_ERROR, later SENDs SERVICE_NOT_AVAILABLE (14) and ACKs
// SYSTEM_ERROR (1), every refusal is counted, the route loses PermWrite;
// once space is freed the probe reopens the store, SENDs and ACKs succeed,
// and after a restart everything acknowledged is there.
func TestDiskFull_RefuseRecoverNoLoss(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 64)
	h := startHarness(t, func(c *conf.Config) {
		c.DataDir = filepath.Join(mnt, "db")
		c.WriterProbeInterval = 50 * time.Millisecond
		c.DiskSpaceWarningLevelRatio = 0 // the write itself must fail
	})
	h.createTopic("T", 1)
	c := h.dial()
	acked := map[int64]int{}
	next := 0
	for ; next < 6; next++ {
		resp := sendBig(t, c, next)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		sh, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
		require.NoError(t, err)
		acked[sh.QueueOffset] = next
	}
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 60000})
	require.Len(t, ms, 2)

	ballast := popstoretest.Fill(t, mnt)
	refused := 0
	for i := 0; i < 64 && refused < 10; i++ {
		resp := sendBig(t, c, next)
		switch resp.Code {
		case codec.Success: // fit in what was left
			sh, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
			require.NoError(t, err)
			acked[sh.QueueOffset] = next
		case codec.SystemError: // the write that failed
			require.Zero(t, refused, "only the failing batch answers SYSTEM_ERROR: %s", resp.Remark)
		case codec.ServiceNotAvailable:
			refused++
			require.Contains(t, resp.Remark, "disk is full")
		default:
			t.Fatalf("SEND on a full disk: code %d %s", resp.Code, resp.Remark)
		}
		next++
	}
	require.Equal(t, 10, refused, "SENDs refused with SERVICE_NOT_AVAILABLE")
	require.False(t, h.b().Writer.Writable())
	require.Equal(t, codec.PermRead, h.b().Self().AdvertisedPerm(codec.PermRead|codec.PermWrite), "registrations drop PermWrite")
	tm, ok := h.b().Topics.Get("T")
	require.True(t, ok)
	require.Equal(t, tm.Perm, h.b().Self().RouteOf(tm).QueueDatas[0].Perm,
		"the embedded route keeps PermWrite: producers of a one-broker setup get SERVICE_NOT_AVAILABLE, not 'No route info'")
	require.Equal(t, codec.SystemError, ack(t, c, "G", "T", ms[0]), "ACK refused while the store is not writable")
	require.GreaterOrEqual(t, metricSum(t, h, "popshim_writer_failed_mutations_total"), float64(refused+1),
		"every refused mutation is counted")

	require.NoError(t, os.Remove(ballast))
	eventually(t, h.b().Writer.Writable, "the probe reopens the store")
	require.Equal(t, codec.PermRead|codec.PermWrite, h.b().Self().AdvertisedPerm(codec.PermRead|codec.PermWrite))
	resp := sendBig(t, c, next)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	sh, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	acked[sh.QueueOffset] = next
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[1]))
	checkStored(t, h, acked)

	h.restart()
	checkStored(t, h, acked)
}

// TestDiskFull_CloseWhileFailed: stopping the broker while its writer is
// failed does not abort, and a restart after space returned loses nothing.
func TestDiskFull_CloseWhileFailed(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 64)
	h := startHarness(t, func(c *conf.Config) {
		c.DataDir = filepath.Join(mnt, "db")
		c.WriterProbeInterval = time.Hour
		c.DiskSpaceWarningLevelRatio = 0
	})
	h.createTopic("T", 1)
	c := h.dial()
	acked := map[int64]int{}
	ballast := ""
	for i := 0; i < 64; i++ {
		if i == 4 {
			ballast = popstoretest.Fill(t, mnt)
		}
		resp := sendBig(t, c, i)
		if resp.Code != codec.Success {
			break
		}
		sh, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
		require.NoError(t, err)
		acked[sh.QueueOffset] = i
	}
	require.False(t, h.b().Writer.Writable())
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.ErrorIs(t, h.st.Close(ctx), batch.ErrFailed, "Close reports the failure, and does not abort")
	h.st = nil
	require.NoError(t, os.Remove(ballast))
	h.start()
	checkStored(t, h, acked)
}

// TestDiskFull_GuardRefusesSendsKeepsAcks: above
// --disk-space-warning-level-ratio SENDs answer SERVICE_NOT_AVAILABLE while
// POP and ACK keep working; below it again SENDs are accepted.
func TestDiskFull_GuardRefusesSendsKeepsAcks(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 64)
	h := startHarness(t, func(c *conf.Config) {
		c.DataDir = filepath.Join(mnt, "db")
		c.DiskSpaceWarningLevelRatio = 0.6
	})
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	ballast := filepath.Join(mnt, "ballast")
	require.NoError(t, os.WriteFile(ballast, make([]byte, 48<<20), 0o644)) // ~75 % used
	eventually(t, func() bool { return !h.b().Writer.Writable() }, "the disk guard trips")
	resp := call(t, c, sendReq("T", 0, []byte("refused"), sendOpts{}))
	require.Equal(t, codec.ServiceNotAvailable, resp.Code, resp.Remark)
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 60000})
	require.Len(t, ms, 3, "POP keeps working")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]), "ACK keeps working")
	require.Equal(t, 1.0, metricSum(t, h, "popshim_writer_disk_full"))

	require.NoError(t, os.Remove(ballast))
	eventually(t, h.b().Writer.Writable, "the disk guard releases")
	send(t, c, "T", 0, "accepted", sendOpts{})
}

// TestDiskFull_RegistrarDropsPermWrite: while the disk is above the
// warning level the registrar re-registers every topic without PermWrite
// (with a new data version, so the name server applies it), and with it
// again once the disk is below it.
func TestDiskFull_RegistrarDropsPermWrite(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 64)
	f, nsAddr := startFakeNamesrv(t)
	cfg := d2Config(filepath.Join(mnt, "db"))
	cfg.NamesrvAddr = nsAddr
	cfg.RegisterInterval = time.Hour
	cfg.DiskSpaceWarningLevelRatio = 0.6
	st, err := stack.StartStack(cfg, zerolog.Nop())
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = st.Close(ctx)
	}()
	lastPerm := func() (int32, int64) { return f.lastPerm("TBW102") }
	eventually(t, func() bool { p, _ := lastPerm(); return p >= 0 && p&codec.PermWrite != 0 }, "first registration")
	_, c0 := lastPerm()
	ballast := filepath.Join(mnt, "ballast")
	require.NoError(t, os.WriteFile(ballast, make([]byte, 48<<20), 0o644))
	eventually(t, func() bool { p, c := lastPerm(); return p&codec.PermWrite == 0 && c > c0 }, "registered without PermWrite")
	_, c1 := lastPerm()
	require.NoError(t, os.Remove(ballast))
	eventually(t, func() bool { p, c := lastPerm(); return p&codec.PermWrite != 0 && c > c1 }, "registered with PermWrite again")
}
