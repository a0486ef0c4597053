package handler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/meta"
)

// Deleting a topic deletes its request modes durably: they do not come
// back after a restart, while other topics' modes stay (found in a restart
// test: Delete dropped them only in memory).
func TestDeleteTopicDropsRequestModesDurably(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("X", 1)
	h.createTopic("Y", 1)
	set := func(m meta.RequestMode) {
		done := make(chan error, 1)
		require.NoError(t, h.b().Topics.SetRequestMode(m, func(err error) { done <- err }))
		require.NoError(t, <-done)
	}
	set(meta.RequestMode{Topic: "X", ConsumerGroup: "G", Mode: "PULL"})
	set(meta.RequestMode{Topic: "Y", ConsumerGroup: "G", Mode: "POP"})
	del := make(chan error, 1)
	require.NoError(t, h.b().Topics.Delete("X", nil, func(_ []string, err error) { del <- err }))
	require.NoError(t, <-del)
	_, ok := h.b().Topics.RequestMode("X", "G")
	require.False(t, ok, "dropped in memory")
	h.restart()
	m, ok := h.b().Topics.RequestMode("X", "G")
	require.False(t, ok, "request mode of the deleted topic came back after restart: %+v", m)
	m, ok = h.b().Topics.RequestMode("Y", "G")
	require.True(t, ok, "another topic's mode survives")
	require.Equal(t, "POP", m.Mode)

	// A re-created topic's new mode, set after the delete, is kept.
	h.createTopic("X", 1)
	set(meta.RequestMode{Topic: "X", ConsumerGroup: "G", Mode: "POP"})
	h.restart()
	m, ok = h.b().Topics.RequestMode("X", "G")
	require.True(t, ok)
	require.Equal(t, "POP", m.Mode)
}
