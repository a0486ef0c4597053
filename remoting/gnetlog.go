package remoting

import (
	"github.com/panjf2000/gnet/v2/pkg/logging"
	"github.com/rs/zerolog"
)

// gnetLogger routes gnet's own log lines into zerolog with component=gnet.
// Fatalf is logged at error level: gnet must never end the process.
type gnetLogger struct{ log zerolog.Logger }

var _ logging.Logger = gnetLogger{}

func (g gnetLogger) Debugf(format string, args ...any) { g.log.Debug().Msgf(format, args...) }
func (g gnetLogger) Infof(format string, args ...any)  { g.log.Debug().Msgf(format, args...) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.log.Warn().Msgf(format, args...) }
func (g gnetLogger) Errorf(format string, args ...any) { g.log.Error().Msgf(format, args...) }
func (g gnetLogger) Fatalf(format string, args ...any) { g.log.Error().Msgf(format, args...) }
