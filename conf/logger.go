package conf

import (
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
)

// Values of Config.LogFormat (--log-format).
const (
	// LogFormatAuto is console when the log writer is a terminal, JSON
	// otherwise (the default).
	LogFormatAuto = "auto"
	// LogFormatJSON is one JSON object per line.
	LogFormatJSON = "json"
	// LogFormatConsole is zerolog's human-readable console format, coloured
	// only on a terminal.
	LogFormatConsole = "console"
)

// terminal reports whether w is a terminal; a variable so tests can stand
// in for a TTY.
var terminal = isTerminal

// NewLogger builds the process logger from LogLevel and LogFormat, writing
// to w (os.Stderr in main). Call after Load: an invalid level falls back to
// info, an unknown format to JSON. With LogFormatAuto the format follows w:
// console on a terminal, JSON otherwise. Timestamps are RFC 3339 with
// milliseconds.
func (c *Config) NewLogger(w io.Writer) zerolog.Logger {
	level, err := zerolog.ParseLevel(c.LogLevel)
	if err != nil || c.LogLevel == "" {
		level = zerolog.InfoLevel
	}
	tty := terminal(w)
	if c.LogFormat == LogFormatConsole || (c.LogFormat == LogFormatAuto && tty) {
		// Colour only on a terminal: ANSI codes in a log file are noise.
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000", NoColor: !tty}
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(level).With().Timestamp().Str("broker", c.BrokerName).Logger()
}

// isTerminal reports whether w is a character device such as a TTY.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
