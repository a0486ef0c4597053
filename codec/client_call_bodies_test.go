package codec

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bodies rocketmq-proxy writes for v5 clients' answers: fastjson
// field order, null fields left out, no HTML escaping.
func TestClientCallBodies(t *testing.T) {
	b := EncodeJstackRunningInfo("\"main\" <a> & b\n")
	assert.Equal(t, `{"jstack":"\"main\" <a> & b\n","mqPopTable":{},"mqTable":{},"properties":{},"statusTable":{},"subscriptionSet":[],"userConsumerInfo":{}}`, string(b))
	var back ConsumerRunningInfo
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, "\"main\" <a> & b\n", back.Jstack)

	assert.Equal(t, `{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"remark":"from gRPC client","spentTimeMills":0}`,
		string(EncodeConsumeMessageDirectlyResult(ConsumeMessageDirectlyResult{AutoCommit: true, ConsumeResult: CMResultSuccess, Remark: "from gRPC client"})))
	assert.Equal(t, `{"autoCommit":true,"order":false,"spentTimeMills":5}`,
		string(EncodeConsumeMessageDirectlyResult(ConsumeMessageDirectlyResult{AutoCommit: true, SpentTimeMills: 5})))
}
