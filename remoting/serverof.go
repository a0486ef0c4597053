package remoting

// ServerOf returns the Server that dispatched the request behind c, so a
// handler can reach another connection of the same listener (Invoke,
// Send): an admin's GET_CONSUMER_RUNNING_INFO is forwarded to the
// consumer's connection on the listener it came in on. nil for a Conn
// that did not come from a Server's dispatch.
func ServerOf(c Conn) *Server {
	if r, ok := c.(*request); ok {
		return r.c.srv
	}
	return nil
}
