package timer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/popshim/popshim/codec"
)

// DefaultMaxDelaySec is RocketMQ's default timerMaxDelaySec (3 days).
const DefaultMaxDelaySec = 3 * 24 * 3600

// Settings are the delay knobs, read from the configuration once.
type Settings struct {
	// LevelMillis[i] is the delay of level i+1 (--message-delay-level,
	// conf.Config.DelayLevelMillis).
	LevelMillis []int64
	// MaxDelayMillis bounds timer messages (--timer-max-delay-sec).
	MaxDelayMillis int64
}

// ErrIllegal is Resolve's refusal of a timer message: a timer property
// that is not a number, a delivery time beyond MaxDelayMillis, or a
// deletion marker (TIMER_DEL_UNIQKEY) whose time is not in the future.
// Java answers its
// WHEEL_TIMER_MSG_ILLEGAL status with MESSAGE_ILLEGAL and IllegalRemark.
var ErrIllegal = errors.New("timer message illegal")

// IllegalRemark is the remark of a refused timer message, as
// SendMessageProcessor words it.
func (s *Settings) IllegalRemark() string {
	return fmt.Sprintf("timer message illegal, the delay time should not be bigger than the max delay %dms; or if set del msg, the delay time should be bigger than the current time", s.MaxDelayMillis)
}

// Schedule is what Resolve decided for a message.
type Schedule struct {
	// DueMillis is the delivery time; 0: not delayed, store it at once.
	DueMillis int64
	// Props are the properties to store: for a delayed message with
	// REAL_TOPIC and REAL_QID (and TIMER_OUT_MS for a timer message) set,
	// and for a delay level the timer properties removed, as
	// HookUtils.handleScheduleMessage leaves them.
	Props string
	// DeleteKey is set for a deletion marker (a timer message carrying
	// TIMER_DEL_UNIQKEY, `<topic>+<UNIQ_KEY>`): nothing is delivered; the
	// timer message of that key due in the slot of DueMillis (SlotOf) is
	// cancelled (cancel.go).
	DeleteKey string
}

// Resolve applies RocketMQ's delay rules to the properties of a message
// for topic/queueID received at nowMillis (broker clock):
//   - DELAY ≥ 1 delays by that level (above the last level: the last);
//     the timer properties are then dropped. 0, negative or not a number:
//     no delay level.
//   - Otherwise, unless TIMER_OUT_MS is already set, TIMER_DELAY_SEC,
//     TIMER_DELAY_MS or TIMER_DELIVER_MS (first present wins, in that
//     order) gives the delivery time: in the future it is delayed to it
//     (at most MaxDelayMillis ahead, else ErrIllegal); now or in the past
//     it is stored at once. Unlike Java no rounding to a 1 s precision is
//     done: a message never arrives before its time.
//   - A timer message that also carries TIMER_DEL_UNIQKEY is a deletion
//     marker (Schedule.DeleteKey): its time must be in the future (else
//     ErrIllegal, as HookUtils.transformTimerMessage) and within
//     MaxDelayMillis. With a delay level, or without a timer property, the
//     property means nothing, as in Java.
//
// Any goroutine; no I/O.
func (s *Settings) Resolve(props, topic string, queueID int32, nowMillis int64) (Schedule, error) {
	if !mayHaveSchedule(props) {
		return Schedule{Props: props}, nil
	}
	if v, ok := codec.PropertyValue(props, codec.PropertyDelayTimeLevel); ok {
		if level, err := strconv.Atoi(v); err == nil && level > 0 {
			level = min(level, len(s.LevelMillis))
			for _, k := range []string{codec.PropertyTimerDeliverMS, codec.PropertyTimerDelaySec, codec.PropertyTimerDelayMS} {
				props = codec.DeleteProperty(props, k)
			}
			if strconv.Itoa(level) != v {
				props, _ = codec.SetProperty(props, codec.PropertyDelayTimeLevel, strconv.Itoa(level))
			}
			return s.delayed(props, topic, queueID, nowMillis+s.LevelMillis[level-1], false)
		}
	}
	if _, ok := codec.PropertyValue(props, codec.PropertyTimerOutMS); ok {
		return Schedule{Props: props}, nil
	}
	var due int64
	if v, ok := codec.PropertyValue(props, codec.PropertyTimerDelaySec); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > s.MaxDelayMillis/1000+1 {
			return Schedule{}, ErrIllegal
		}
		due = nowMillis + n*1000
	} else if v, ok := codec.PropertyValue(props, codec.PropertyTimerDelayMS); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > s.MaxDelayMillis+1 {
			return Schedule{}, ErrIllegal
		}
		due = nowMillis + n
	} else if v, ok := codec.PropertyValue(props, codec.PropertyTimerDeliverMS); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Schedule{}, ErrIllegal
		}
		due = n
	} else {
		return Schedule{Props: props}, nil
	}
	delKey, del := codec.PropertyValue(props, codec.PropertyTimerDelUniqKey)
	switch {
	case due <= nowMillis && del:
		return Schedule{}, ErrIllegal
	case due <= nowMillis:
		return Schedule{Props: props}, nil
	case due-nowMillis > s.MaxDelayMillis:
		return Schedule{}, ErrIllegal
	}
	sch, err := s.delayed(props, topic, queueID, due, true)
	if del {
		sch.DeleteKey = delKey
	}
	return sch, err
}

// delayed sets REAL_TOPIC, REAL_QID and, for a timer message, TIMER_OUT_MS.
func (s *Settings) delayed(props, topic string, queueID int32, due int64, timerMsg bool) (Schedule, error) {
	var err error
	if timerMsg {
		if props, err = codec.SetProperty(props, codec.PropertyTimerOutMS, strconv.FormatInt(due, 10)); err != nil {
			return Schedule{}, err
		}
	}
	if props, err = codec.SetProperty(props, codec.PropertyRealTopic, topic); err != nil {
		return Schedule{}, err
	}
	if props, err = codec.SetProperty(props, codec.PropertyRealQueueID, strconv.Itoa(int(queueID))); err != nil {
		return Schedule{}, err
	}
	return Schedule{DueMillis: max(due, 1), Props: props}, nil
}

// LevelDelay returns the delay of a level (clamped to 1..N).
func (s *Settings) LevelDelay(level int32) time.Duration {
	l := min(max(int(level), 1), len(s.LevelMillis))
	return time.Duration(s.LevelMillis[l-1]) * time.Millisecond
}

// mayHaveSchedule reports whether props may hold DELAY or a TIMER_*
// property: false when neither "DELAY\x01" (the key and its separator) nor
// "TIMER_" occurs anywhere in them, so an ordinary message costs two
// substring searches instead of one key lookup per property Resolve reads.
func mayHaveSchedule(props string) bool {
	return strings.Contains(props, codec.PropertyDelayTimeLevel+string(codec.PropertyNameValueSeparator)) ||
		strings.Contains(props, "TIMER_")
}
