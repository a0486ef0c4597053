package codec

import (
	"errors"
	"testing"
)

// TestDecodeCheckClientRequestBody reads the body as the Java client's
// fastjson writes it, an empty body, and refuses one that is not JSON.
func TestDecodeCheckClientRequestBody(t *testing.T) {
	b, err := DecodeCheckClientRequestBody([]byte(`{"clientId":"10.0.0.1@1234","group":"G","namespace":"",` +
		`"subscriptionData":{"classFilterMode":false,"codeSet":[],"expressionType":"SQL92","subString":"a > 1",` +
		`"subVersion":1764640000000,"tagsSet":[],"topic":"T"}}`))
	if err != nil || b.ClientID != "10.0.0.1@1234" || b.Group != "G" || b.SubscriptionData == nil ||
		b.SubscriptionData.ExpressionType != "SQL92" || b.SubscriptionData.SubString != "a > 1" || b.SubscriptionData.Topic != "T" {
		t.Fatalf("decoded %+v %v", b, err)
	}
	if b, err := DecodeCheckClientRequestBody(nil); err != nil || b.SubscriptionData != nil {
		t.Fatalf("empty body: %+v %v", b, err)
	}
	if b, err := DecodeCheckClientRequestBody([]byte(`{"clientId":"c"}`)); err != nil || b.SubscriptionData != nil {
		t.Fatalf("no subscription: %+v %v", b, err)
	}
	if _, err := DecodeCheckClientRequestBody([]byte(`{"clientId":`)); !errors.Is(err, ErrInvalidField) {
		t.Fatalf("bad body: %v", err)
	}
}
