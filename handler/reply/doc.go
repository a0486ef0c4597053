// Package reply holds the answers every request handler shares: sending a
// response unless the request was oneway (Respond, Code), the SYSTEM_ERROR
// answer to an undecodable header (HeaderError), and the mapping of a
// batch.Writer Submit refusal to a RocketMQ response code and remark
// (SubmitCode, SubmitRemark, SubmitError, Done), and the remarks several
// handlers share for a missing or disabled subscription group.
//
// Callers: request handlers on the gnet event loops, the POP service's
// reader goroutines, and batch.Op completions on the writer's completer
// goroutine; every function is safe on any goroutine and never blocks
// (remoting.Conn.Reply queues the frame on the connection's event loop).
//
// It must not hold state, decide what a request means, or import another
// handler package.
package reply
