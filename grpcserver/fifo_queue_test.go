package grpcserver

import "testing"

// Results of Guava's Hashing.consistentHash(int, int) as shaded into the
// Java v5 client 5.2.0 (org.apache.rocketmq.shaded.com.google.common.hash),
// printed by a Java program on 2026-12-06: input, buckets, bucket.
var guavaConsistentHash = []struct {
	input   int64
	buckets int32
	want    int32
}{
	{0, 1, 0},
	{0, 2, 0},
	{0, 3, 0},
	{0, 7, 0},
	{0, 8, 0},
	{0, 16, 0},
	{0, 100, 0},
	{0, 1024, 0},
	{0, 65536, 0},
	{1, 1, 0},
	{1, 2, 0},
	{1, 3, 0},
	{1, 7, 6},
	{1, 8, 6},
	{1, 16, 6},
	{1, 100, 55},
	{1, 1024, 549},
	{1, 65536, 21134},
	{-1, 1, 0},
	{-1, 2, 1},
	{-1, 3, 2},
	{-1, 7, 2},
	{-1, 8, 7},
	{-1, 16, 10},
	{-1, 100, 92},
	{-1, 1024, 313},
	{-1, 65536, 18311},
	{42, 1, 0},
	{42, 2, 1},
	{42, 3, 2},
	{42, 7, 2},
	{42, 8, 2},
	{42, 16, 2},
	{42, 100, 43},
	{42, 1024, 571},
	{42, 65536, 5747},
	{3208, 1, 0},
	{3208, 2, 1},
	{3208, 3, 1},
	{3208, 7, 1},
	{3208, 8, 1},
	{3208, 16, 1},
	{3208, 100, 29},
	{3208, 1024, 772},
	{3208, 65536, 8131},
	{-123456789, 1, 0},
	{-123456789, 2, 1},
	{-123456789, 3, 1},
	{-123456789, 7, 1},
	{-123456789, 8, 1},
	{-123456789, 16, 1},
	{-123456789, 100, 49},
	{-123456789, 1024, 502},
	{-123456789, 65536, 27896},
	{2147483647, 1, 0},
	{2147483647, 2, 0},
	{2147483647, 3, 0},
	{2147483647, 7, 0},
	{2147483647, 8, 0},
	{2147483647, 16, 9},
	{2147483647, 100, 56},
	{2147483647, 1024, 231},
	{2147483647, 65536, 51833},
	{-2147483648, 1, 0},
	{-2147483648, 2, 1},
	{-2147483648, 3, 2},
	{-2147483648, 7, 2},
	{-2147483648, 8, 2},
	{-2147483648, 16, 2},
	{-2147483648, 100, 58},
	{-2147483648, 1024, 185},
	{-2147483648, 65536, 39408},
	{987654321, 1, 0},
	{987654321, 2, 0},
	{987654321, 3, 2},
	{987654321, 7, 2},
	{987654321, 8, 2},
	{987654321, 16, 2},
	{987654321, 100, 84},
	{987654321, 1024, 533},
	{987654321, 65536, 22642},
	{99, 1, 0},
	{99, 2, 0},
	{99, 3, 2},
	{99, 7, 2},
	{99, 8, 2},
	{99, 16, 2},
	{99, 100, 19},
	{99, 1024, 947},
	{99, 65536, 55920},
}

func TestConsistentBucketMatchesGuava(t *testing.T) {
	for _, v := range guavaConsistentHash {
		if got := consistentBucket(v.input, v.buckets); got != v.want {
			t.Errorf("consistentBucket(%d, %d) = %d, Guava %d", v.input, v.buckets, got, v.want)
		}
	}
}

// The queue rocketmq-proxy 5.5.0 sends a FIFO message group to
// (Hashing.consistentHash(group.hashCode(), writeQueueNums), printed from
// Java on 2026-12-06): group, writeQueueNums, queueId. popshim took
// hashCode mod writeQueueNums until then (g1 → 2 of 8 where the proxy
// picks 6).
var proxyFifoQueues = []struct {
	group string
	n     int32
	want  int32
}{
	{"g1", 2, 0},
	{"g3", 2, 0},
	{"A", 2, 0},
	{"order-42", 2, 0},
	{"", 2, 0},
	{"主题", 2, 1},
	{"user-000123", 2, 0},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 2, 1},
	{"g1", 3, 0},
	{"g3", 3, 2},
	{"A", 3, 0},
	{"order-42", 3, 2},
	{"", 3, 0},
	{"主题", 3, 1},
	{"user-000123", 3, 2},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 3, 1},
	{"g1", 4, 0},
	{"g3", 4, 2},
	{"A", 4, 0},
	{"order-42", 4, 3},
	{"", 4, 0},
	{"主题", 4, 1},
	{"user-000123", 4, 2},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 4, 1},
	{"g1", 5, 0},
	{"g3", 5, 2},
	{"A", 5, 0},
	{"order-42", 5, 3},
	{"", 5, 0},
	{"主题", 5, 4},
	{"user-000123", 5, 2},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 5, 1},
	{"g1", 8, 6},
	{"g3", 8, 2},
	{"A", 8, 0},
	{"order-42", 8, 3},
	{"", 8, 0},
	{"主题", 8, 4},
	{"user-000123", 8, 6},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 8, 1},
	{"g1", 16, 9},
	{"g3", 16, 14},
	{"A", 16, 11},
	{"order-42", 16, 10},
	{"", 16, 0},
	{"主题", 16, 11},
	{"user-000123", 16, 6},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 16, 1},
	{"g1", 24, 19},
	{"g3", 24, 14},
	{"A", 24, 21},
	{"order-42", 24, 16},
	{"", 24, 0},
	{"主题", 24, 11},
	{"user-000123", 24, 6},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 24, 1},
	{"g1", 64, 41},
	{"g3", 64, 47},
	{"A", 64, 41},
	{"order-42", 64, 25},
	{"", 64, 0},
	{"主题", 64, 44},
	{"user-000123", 64, 6},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 64, 54},
	{"g1", 1000, 290},
	{"g3", 1000, 445},
	{"A", 1000, 798},
	{"order-42", 1000, 753},
	{"", 1000, 0},
	{"主题", 1000, 230},
	{"user-000123", 1000, 653},
	{"zzzzzzzzzzzzzzzzzzzzzzz", 1000, 468},
}

func TestFifoQueueIDMatchesProxy(t *testing.T) {
	for _, v := range proxyFifoQueues {
		if got := fifoQueueID(v.group, v.n); got != v.want {
			t.Errorf("fifoQueueID(%q, %d) = %d, proxy %d", v.group, v.n, got, v.want)
		}
	}
}
