package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// TestCoreCheckClientConfig: the answers of CHECK_CLIENT_CONFIG for each
// kind of subscription, with --enable-property-filter on and off.
func TestCoreCheckClientConfig(t *testing.T) {
	on := brokertest.Start(t, nil, nil)
	cfg := brokertest.Config(t.TempDir())
	cfg.EnablePropertyFilter = false
	off := brokertest.Start(t, cfg, nil)
	sub := func(typ, exp string) broker.CheckClientConfigRequest {
		return broker.CheckClientConfigRequest{ClientID: "c", Group: "G", HasSubscription: true, ExpressionType: typ, Expression: exp}
	}
	const unsupported = "The broker does not support consumer to filter message by SQL92"
	for _, c := range []struct {
		name   string
		f      *brokertest.Fixture
		r      broker.CheckClientConfigRequest
		code   int32
		remark string
	}{
		{"no subscription", on, broker.CheckClientConfigRequest{ClientID: "c"}, codec.Success, ""},
		{"tag", on, sub("TAG", "a || b"), codec.Success, ""},
		{"empty type", on, sub("", "*"), codec.Success, ""},
		{"sql92", on, sub("SQL92", "a BETWEEN 1 AND 3 OR b IS NULL"), codec.Success, ""},
		{"sql92 parse error", on, sub("SQL92", "a BETWEEN 3 AND 1"), codec.SubscriptionParseFailed,
			"SQL92 expression: line 1, column 3: illegal values of BETWEEN, left value (3) must be less than or equal to right value (1)"},
		{"sql92 empty", on, sub("SQL92", ""), codec.SubscriptionParseFailed, "SQL92 expression: line 1, column 1: unexpected end of expression"},
		{"unknown type", on, sub("XPATH", "/a"), codec.SubscriptionParseFailed, `unknown expression type "XPATH"`},
		{"sql92 flag off", off, sub("SQL92", "a = 1"), codec.SystemError, unsupported},
		{"sql92 parse error flag off", off, sub("SQL92", "a ="), codec.SystemError, unsupported},
		{"unknown type flag off", off, sub("XPATH", "/a"), codec.SystemError, "The broker does not support consumer to filter message by XPATH"},
		{"tag flag off", off, sub("TAG", "*"), codec.Success, ""},
		{"no subscription flag off", off, broker.CheckClientConfigRequest{}, codec.Success, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got error
			calls := 0
			c.f.Broker.CheckClientConfig(c.r, func(err error) { got = err; calls++ })
			if calls != 1 {
				t.Fatalf("done called %d times before return", calls)
			}
			if c.code == codec.Success {
				if got != nil {
					t.Fatalf("err = %v, want SUCCESS", got)
				}
				return
			}
			e := broker.ErrorOf(got)
			if e.Code != c.code || len(e.Remark) < len(c.remark) || e.Remark[:len(c.remark)] != c.remark {
				t.Fatalf("err = %v, want %d %q", got, c.code, c.remark)
			}
		})
	}
}
