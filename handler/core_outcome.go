package handler

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// replyOutcome answers req with the outcome of a core operation that has
// no result: SUCCESS with an empty remark for nil, else the error's code
// and remark (reply.Err). Any goroutine; a completion callback.
func replyOutcome(c remoting.Conn, req *codec.Command, err error) {
	if err != nil {
		reply.Err(c, req, err)
		return
	}
	reply.Code(c, req, codec.Success, "")
}
