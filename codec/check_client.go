package codec

// CheckClientRequestBody is the CHECK_CLIENT_CONFIG (46) request body
// (remoting/.../protocol/body/CheckClientRequestBody.java): the client
// instance, its consumer group, one subscription to check (nil when the
// body has none) and its namespace.
type CheckClientRequestBody struct {
	ClientID         string            `json:"clientId"`
	Group            string            `json:"group"`
	SubscriptionData *SubscriptionData `json:"subscriptionData"`
	Namespace        string            `json:"namespace"`
}

// DecodeCheckClientRequestBody parses the body; an empty body is a body
// without a subscription (Java's decode of null gives null). Errors wrap
// ErrInvalidField.
func DecodeCheckClientRequestBody(b []byte) (CheckClientRequestBody, error) {
	var v CheckClientRequestBody
	if len(b) == 0 {
		return v, nil
	}
	return v, decodeJSONBody("check client config", b, &v)
}
