package reply

import (
	"errors"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
)

// IsBusy reports whether a Submit error means "lane full, retry later".
func IsBusy(err error) bool { return errors.Is(err, batch.ErrBusy) }

// BusyRemark is broker.BusyRemark: the remark of a SYSTEM_BUSY answer
// caused by a full writer lane or reader queue.
const BusyRemark = broker.BusyRemark
