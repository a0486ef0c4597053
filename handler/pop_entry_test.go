package handler_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// TestPopEntriesAreStoredRecordsWithCK pops, over TCP, messages of every
// shape a SEND stores (empty and 4 MiB bodies, the compressed and
// transaction-commit sysFlag bits, a 127-byte topic, reconsumeTimes,
// properties of 32 KB, quotes, a backslash and non-ASCII in a value) and
// checks each reply entry byte for byte against the stored record decoded,
// given POP_CK with SetProperty and encoded again: the way the POP built
// every entry before AppendPopRecord copied the record instead. The same
// for the retry records a revive writes, popped under the topic asked for.
func TestPopEntriesAreStoredRecordsWithCK(t *testing.T) {
	h := startHarness(t, nil)
	topic := strings.Repeat("t", 127)
	h.createTopic(topic, 1)
	c := h.dial()
	type msg struct {
		body string
		o    sendOpts
	}
	msgs := []msg{
		{"plain", sendOpts{tag: "A"}},
		{"", sendOpts{}},
		{"z", sendOpts{sysFlag: codec.SysFlagCompressed | 2<<8}},
		{"tx", sendOpts{sysFlag: codec.SysFlagTransactionCommit}},
		{"r", sendOpts{reconsume: 5}},
		{"q", sendOpts{props: map[string]string{"X": "a\"b\\c\u00e9\u2028"}}},
		{strings.Repeat("B", 4<<20), sendOpts{}},
		{"near", sendOpts{props: map[string]string{"K": strings.Repeat("v", codec.MaxSendPropertiesLen-200)}}},
	}
	for _, m := range msgs {
		send(t, c, topic, 0, m.body, m.o)
	}
	// popEntries pops until n entries came back and returns them.
	popEntries := func(group string, queueID int32, invisible int64, n int) [][]byte {
		var got [][]byte
		for range 10 * n {
			if len(got) == n {
				break
			}
			resp := call(t, c, popArgs{group: group, topic: topic, queueID: queueID, max: 32, invisible: invisible, poll: 50}.request())
			if resp.Code == codec.PollingTimeout {
				continue
			}
			require.Equal(t, codec.Success, resp.Code, resp.Remark)
			parsePop(t, resp)
			for off := 0; off < len(resp.Body); {
				size := int(binary.BigEndian.Uint32(resp.Body[off:]))
				got = append(got, resp.Body[off:off+size])
				off += size
			}
		}
		require.Len(t, got, n)
		return got
	}
	// check compares entry with the general encoding of the record it came
	// from (located through its POP_CK) and returns that record's message.
	check := func(group string, entry []byte) codec.MessageExt {
		m, _, err := codec.DecodeMessage(entry)
		require.NoError(t, err)
		ck, ok := m.Property(codec.PropertyPopCK)
		require.True(t, ok)
		ei, err := codec.ParseExtraInfo(ck)
		require.NoError(t, err)
		rec, err := h.b().Store.ReadMessage(ei.RealTopic(topic, group), ei.QueueID, ei.QueueOffset)
		require.NoError(t, err)
		want, _, err := codec.DecodeMessage(rec)
		require.NoError(t, err)
		want.Topic = topic
		want.Properties, err = codec.SetProperty(want.Properties, codec.PropertyPopCK, ck)
		require.NoError(t, err)
		wantEntry, err := codec.AppendMessage(nil, &want)
		require.NoError(t, err)
		require.True(t, bytes.Equal(wantEntry, entry), "%s: entry of %q differs from the general encoding", group, m.Body)
		return m
	}
	for _, group := range []string{"G1", "G2"} {
		for i, entry := range popEntries(group, 0, 3000, len(msgs)) {
			m := check(group, entry)
			require.Equal(t, msgs[i].body, string(m.Body))
			require.Equal(t, msgs[i].o.reconsume, m.ReconsumeTimes)
		}
	}
	h.advance(4 * time.Second)
	h.reviveNow()
	seen := map[string]bool{}
	for _, entry := range popEntries("G1", -1, 60_000, len(msgs)) {
		m := check("G1", entry)
		ck, _ := m.Property(codec.PropertyPopCK)
		ei, _ := codec.ParseExtraInfo(ck)
		require.NotEqual(t, codec.RetryFlagNormal, ei.RetryFlag, "not a retry record")
		seen[string(m.Body)] = true
	}
	require.Len(t, seen, len(msgs))
}

// TestPopEntriesOverIPv6 is TestPopEntriesAreStoredRecordsWithCK's check
// for a broker listening on [::1]: the producer's born host (and the
// broker's store host, when it takes the listen address) are IPv6, so the
// records carry the IPv6 sysFlag bits and reconsumeTimes sits further in.
func TestPopEntriesOverIPv6(t *testing.T) {
	h := startHarness(t, func(cfg *conf.Config) { cfg.Listen = "[::1]:0" })
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "six", sendOpts{tag: "A"})
	stored, err := h.b().Store.ReadMessage("T", 0, 0)
	require.NoError(t, err)
	want, _, err := codec.DecodeMessage(stored)
	require.NoError(t, err)
	require.NotZero(t, want.SysFlag&codec.SysFlagBornHostV6, "born host %v not IPv6", want.BornHost)
	resp := call(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60_000}.request())
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	ms := parsePop(t, resp)
	require.Len(t, ms, 1)
	want.Properties, err = codec.SetProperty(want.Properties, codec.PropertyPopCK, ms[0].raw)
	require.NoError(t, err)
	wantEntry, err := codec.AppendMessage(nil, &want)
	require.NoError(t, err)
	require.True(t, bytes.Equal(wantEntry, resp.Body), "entry differs from the general encoding:\n got %q\nwant %q", resp.Body, wantEntry)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
}
