package broker

// Subscription filters of the consuming operations (POP, PULL, and the
// CHECK_CLIENT_CONFIG check): a TAG expression ("*", "a || b") or an SQL92
// selector over message properties (broker/filter, RocketMQ's
// MessageSelector.bySql), the latter only with --enable-property-filter
// (BrokerConfig.enablePropertyFilter).
//
// Where a selector is evaluated: every scan that tests tags tests it
// instead (POP of the topic and its retry topics, PULL), on the stored
// record's properties; a POP consumes the messages its filter rejects
// (the offset moves past them, as for tags), so a selective selector never
// rescans them; a parked POP is woken by a probe that reads the pending
// messages' properties and evaluates its selector (broker/longpoll).
//
// Answers (RocketMQ 5.5): SQL92 while the flag is off → SYSTEM_ERROR (1)
// "The broker does not support consumer to filter message by SQL92"
// (PullMessageProcessor, ClientManageProcessor.checkClientConfig; Java's
// PopMessageProcessor has no such check and serves SQL92 POPs with the
// flag off, popshim refuses them alike); a selector that does not compile
// or an unknown expression type → SUBSCRIPTION_PARSE_FAILED (23) "parse
// the consumer's subscription failed: <why>".

import (
	"errors"
	"strings"

	"github.com/popshim/popshim/broker/filter"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// ParseFilter parses a subscription's expression type and expression into
// the filter of a POP or PULL (nil: every message). expType "" or TAG: a
// tag expression; SQL92: a selector, compiled through broker/filter's
// cache, with an empty expression meaning every message (as
// PopMessageProcessor builds "*" for an empty exp). Errors:
// SYSTEM_ERROR (1) for SQL92 with --enable-property-filter off;
// SUBSCRIPTION_PARSE_FAILED (23) for an unknown type or a selector that
// does not compile (the remark carries its line, column and token). Any
// goroutine; memory only.
func (b *Broker) ParseFilter(expType, exp string) (*longpoll.Filter, *Error) {
	f, err := longpoll.ParseTagFilter(expType, exp)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, longpoll.ErrSQL92):
		return b.compileSQL92(expType, exp)
	}
	return nil, Errorf(codec.SubscriptionParseFailed, "parse the consumer's subscription failed: %s %q", err, expType)
}

// compileSQL92 is ParseFilter of an SQL92 subscription.
func (b *Broker) compileSQL92(expType, exp string) (*longpoll.Filter, *Error) {
	if e := b.CheckPropertyFilter(expType); e != nil {
		return nil, e
	}
	if strings.TrimSpace(exp) == "" {
		return nil, nil
	}
	sel, err := filter.Cached(exp)
	if err != nil {
		return nil, &Error{Code: codec.SubscriptionParseFailed, Remark: "parse the consumer's subscription failed: " + err.Error()}
	}
	return longpoll.SQLFilter(sel), nil
}

// CheckPropertyFilter refuses a non-TAG expression type while
// --enable-property-filter is off: SYSTEM_ERROR (1) "The broker does not
// support consumer to filter message by <expType>", the remark of
// PullMessageProcessor and ClientManageProcessor.checkClientConfig. nil
// for TAG types (""/TAG) and when the flag is on. Any goroutine.
func (b *Broker) CheckPropertyFilter(expType string) *Error {
	if isTagType(expType) || b.Cfg.EnablePropertyFilter {
		return nil
	}
	return &Error{Code: codec.SystemError, Remark: "The broker does not support consumer to filter message by " + expType}
}

// isTagType is ExpressionType.isTagType, ASCII case ignored as popshim's
// TAG parsing does: "" or TAG.
func isTagType(expType string) bool { return expType == "" || strings.EqualFold(expType, "TAG") }
