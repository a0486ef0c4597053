package remoting

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// sumCounter adds up every series of the counter family name.
func sumCounter(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	var sum float64
	for _, mf := range gather(t, reg) {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func sumGauge(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	var sum float64
	for _, mf := range gather(t, reg) {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// histogramCounts maps "request_code/response_code/result" to sample counts.
func histogramCounts(t testing.TB, reg *prometheus.Registry, name string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, mf := range gather(t, reg) {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			require.Equal(t, "remoting", l["protocol_type"])
			out[l["request_code"]+"/"+l["response_code"]+"/"+l["result"]] += m.GetHistogram().GetSampleCount()
		}
	}
	return out
}

func gather(t testing.TB, reg *prometheus.Registry) []*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	return mfs
}
