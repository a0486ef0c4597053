package conf

import (
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
)

// NewLogger builds the process logger from LogLevel and LogFormat, writing
// to w (os.Stderr in main). Call after Load: an invalid level falls back to
// info. Timestamps are RFC 3339 with milliseconds.
func (c *Config) NewLogger(w io.Writer) zerolog.Logger {
	level, err := zerolog.ParseLevel(c.LogLevel)
	if err != nil || c.LogLevel == "" {
		level = zerolog.InfoLevel
	}
	if c.LogFormat == "console" {
		// Colour only on a terminal: ANSI codes in a log file are noise.
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000", NoColor: !isTerminal(w)}
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
