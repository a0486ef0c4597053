package clients

// ProducerChannel returns the live producer channel of client clientID
// (the `ip@instanceName` of its HEART_BEAT), as RocketMQ's
// ProducerManager.findChannel does with its clientId → channel table: the
// requester of a request-reply message is found this way (its
// REPLY_TO_CLIENT property). Only producer registrations count, as in
// Java; a client registered in several producer groups answers with the
// channel of its latest heartbeat. false when no live producer has that
// id. Cost: one map look-up per producer group. Safe on the event loop.
func (t *ClientTable) ProducerChannel(clientID string) (ClientChannel, bool) {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	var best *ClientChannel
	for _, m := range t.producers {
		ch := m[clientID]
		if ch == nil || !t.alive(ch, nowMillis) {
			continue
		}
		if best == nil || ch.LastUpdateMillis > best.LastUpdateMillis {
			best = ch
		}
	}
	if best == nil {
		return ClientChannel{}, false
	}
	return *best, true
}
