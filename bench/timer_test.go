package bench

import (
	"strings"
	"testing"
)

// TestParseTimers reads the timer series with popshim's constant labels and
// derives the lateness percentiles of a span from two scrapes.
func TestParseTimers(t *testing.T) {
	const l = `{cluster="C",node_id="n",node_type="broker"`
	expo := func(deq, le5, le100, le1000, count, sum string) string {
		return "# TYPE rocketmq_timer_dequeue_total counter\nrocketmq_timer_dequeue_total" + l + "} " + deq + "\n" +
			"# TYPE popshim_timer_lateness_milliseconds histogram\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="5"} ` + le5 + "\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="100"} ` + le100 + "\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="1000"} ` + le1000 + "\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="+Inf"} ` + count + "\n" +
			"popshim_timer_lateness_milliseconds_sum" + l + "} " + sum + "\n" +
			"popshim_timer_lateness_milliseconds_count" + l + "} " + count + "\n"
	}
	a, err := parseTimers(strings.NewReader(expo("10", "10", "10", "10", "10", "20")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseTimers(strings.NewReader(expo("110", "10", "70", "110", "110", "20020")))
	if err != nil {
		t.Fatal(err)
	}
	if b.dequeued-a.dequeued != 100 {
		t.Fatalf("dequeued delta %v", b.dequeued-a.dequeued)
	}
	n := b.latCount - a.latCount
	if p50, p99 := bucketQuantile(a.buckets, b.buckets, n, 0.5), bucketQuantile(a.buckets, b.buckets, n, 0.99); p50 != 100 || p99 != 1000 {
		t.Fatalf("p50 %v p99 %v, want 100 and 1000", p50, p99)
	}
	if _, err := parseTimers(strings.NewReader("# TYPE x counter\nx 1\n")); err == nil {
		t.Fatal("no error without the timer series")
	}
}
