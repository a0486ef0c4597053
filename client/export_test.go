package client

// PendingCount returns the number of requests c still waits for, for the
// tests of package client_test.
func PendingCount(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending.n
}
