package grpcserver

import "github.com/popshim/popshim/codec"

// fifoQueueID is the queue a FIFO message of group lands in among a
// topic's writeQueueNums write queues (> 0): the bucket of Guava's
// Hashing.consistentHash(group.hashCode(), writeQueueNums), as
// rocketmq-proxy 5.x picks it from the topic's write queues sorted by
// broker name and queue id (proxy/.../grpc/v2/producer/SendMessageActivity
// .java, SendMessageQueueSelector; service/route/MessageQueueSelector.java).
// On one broker the bucket is the queueId, so a group stays in the same
// queue whether its producer talks to popshim directly or through a proxy.
// Any goroutine; pure.
func fifoQueueID(group string, writeQueueNums int32) int32 {
	return consistentBucket(int64(codec.TagHashCode(group)), writeQueueNums)
}

// consistentBucket is the jump consistent hash (Lamping and Veach) with the
// linear congruential generator Guava's Hashing.consistentHash(long, int)
// uses, so that its results equal Guava's bit for bit: buckets > 0, result
// in [0, buckets). Growing buckets from n to n+1 moves about 1/(n+1) of the
// inputs, all of them into the new bucket.
func consistentBucket(input int64, buckets int32) int32 {
	state := uint64(input) // Java long arithmetic: wraps as uint64 does
	candidate := int32(0)
	for {
		state = 2862933555777941757*state + 1
		// A double in (0, 1]: the generator's top 31 bits, plus one, over 2^31.
		u := float64(int32(state>>33)+1) / (1 << 31)
		next := float64(candidate+1) / u
		// Java casts the quotient to int (saturating at MaxInt32) and jumps
		// while it stays below buckets; compare before converting, as Go's
		// conversion of an out-of-range float is not defined.
		if next >= float64(buckets) {
			return candidate
		}
		candidate = int32(next)
	}
}
