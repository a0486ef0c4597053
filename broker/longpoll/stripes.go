package longpoll

import "hash/maphash"

// stripeCount is the number of stripes the registry's per-topic state
// (waiters, epochs, takers) and its per-connection index are sharded into.
// Fixed, so memory does not grow with the number of topics ever seen.
const stripeCount = 64

// stripeSeed hashes topic names onto stripes; one seed per process.
var stripeSeed = maphash.MakeSeed()

// stripeOf returns the stripe index of a topic name.
func stripeOf(name string) int {
	return int(maphash.String(stripeSeed, name) % stripeCount)
}
