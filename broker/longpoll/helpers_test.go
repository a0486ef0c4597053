package longpoll

// registryState counts what the registry keeps per topic and queue
// (epochs aside: they are swept by count, see TestLP_IdleBookkeepingBounded).
type registryState struct {
	topics, waiterKeys, maxOffsetTopics, maxOffsetQueues, probes int
}

func stateOf(r *Registry) registryState {
	s := r.Stats()
	return registryState{topics: s.Topics, waiterKeys: s.WaiterKeys, maxOffsetTopics: s.MaxOffsetTopics,
		maxOffsetQueues: s.MaxOffsetQueues, probes: s.ProbesQueued}
}

// tagProps is a properties string holding only TAGS=tag.
func tagProps(tag string) string { return "TAGS\x01" + tag + "\x02" }
