package remoting

import "github.com/prometheus/client_golang/prometheus"

// RPCLatency returns the rocketmq_rpc_latency histogram (labels
// protocol_type, request_code, response_code, is_long_polling, result;
// milliseconds), so the gRPC endpoint records its calls in the same series
// family with protocol_type="grpc". nil for a nil *Metrics. The vector is
// registered already; callers only observe.
func (m *Metrics) RPCLatency() *prometheus.HistogramVec {
	if m == nil {
		return nil
	}
	return m.rpcLatency
}
