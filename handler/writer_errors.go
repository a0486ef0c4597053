package handler

import (
	"errors"

	"github.com/popshim/popshim/batch"
)

// isBusy reports whether a Submit error means "lane full, retry later".
func isBusy(err error) bool { return errors.Is(err, batch.ErrBusy) }

// busyRemark is the remark of a SYSTEM_BUSY answer caused by a full writer
// lane or reader queue, worded like the Java broker's flow-control remarks.
const busyRemark = "[OVERLOAD]system busy, start flow control for a while"
