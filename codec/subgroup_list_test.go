package codec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSubscriptionGroupListRoundTrip(t *testing.T) {
	a, b := NewSubscriptionGroupConfig("A"), NewSubscriptionGroupConfig("B")
	b.RetryMaxTimes = 3
	got, err := DecodeSubscriptionGroupList(AppendSubscriptionGroupList(nil, []SubscriptionGroupConfig{a, b}))
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "B", got[1].GroupName)
	require.EqualValues(t, 3, got[1].RetryMaxTimes)
	require.EqualValues(t, 16, got[0].RetryMaxTimes)

	for _, empty := range []string{"", "null", "{}", `{"groupConfigList":null}`, `{"groupConfigList":[null]}`} {
		got, err := DecodeSubscriptionGroupList([]byte(empty))
		require.NoError(t, err, empty)
		require.Empty(t, got, empty)
	}
	_, err = DecodeSubscriptionGroupList([]byte(`{"groupConfigList":{}}`))
	require.ErrorIs(t, err, ErrInvalidField)
}

func TestDeleteSubscriptionGroupListBody(t *testing.T) {
	got, err := DecodeDeleteSubscriptionGroupList([]byte(`{"cleanOffset":"true","groupNameList":["A","B"],"x":1}`))
	require.NoError(t, err)
	require.Equal(t, DeleteSubscriptionGroupList{GroupNameList: []string{"A", "B"}, CleanOffset: true}, got)
	got, err = DecodeDeleteSubscriptionGroupList(nil)
	require.NoError(t, err)
	require.Empty(t, got.GroupNameList)
	_, err = DecodeDeleteSubscriptionGroupList([]byte(`{"groupNameList":"A"}`))
	require.ErrorIs(t, err, ErrInvalidField)
}
