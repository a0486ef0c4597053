package reply

import (
	"errors"

	"github.com/popshim/popshim/batch"
)

// IsBusy reports whether a Submit error means "lane full, retry later".
func IsBusy(err error) bool { return errors.Is(err, batch.ErrBusy) }

// BusyRemark is the remark of a SYSTEM_BUSY answer caused by a full writer
// lane or reader queue, worded like the Java broker's flow-control remarks.
const BusyRemark = "[OVERLOAD]system busy, start flow control for a while"
