package codec

import (
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// untyped returns a copy of c with its slot fields moved into ExtFields, the
// form decodeFrameAs(…, false) produces.
func untyped(c *Command) *Command {
	u := *c
	u.ExtFields = c.ExtMap()
	u.typed = nil
	return &u
}

// headerFrame wraps a JSON header into a frame with no body.
func headerFrame(header string) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)))
	f = binary.BigEndian.AppendUint32(f, uint32(len(header)))
	return append(f, header...)
}

// checkTypedMatchesMap decodes frame with and without slots and requires
// the same command, the same ACK and CHANGE headers and the same errors.
func checkTypedMatchesMap(t *testing.T, frame []byte) (typed *Command) {
	t.Helper()
	got, err := decodeFrameAs(frame, true)
	want, wantErr := decodeFrameAs(frame, false)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%q: typed error %v, map error %v", frame, err, wantErr)
	}
	if err != nil {
		return nil
	}
	if got.typed != nil && got.typed.code != 0 { // slots keep only the keys the typed headers read
		m := map[string]string{}
		for _, k := range got.typed.tab.keys {
			if v, ok := want.ExtFields[k]; ok {
				m[k] = v
			}
		}
		if len(m) == 0 {
			m = nil
		}
		w := *want
		w.ExtFields = m
		want = &w
	}
	w := *want
	w.typed = nil // the map decoder's slots stay empty
	if u := untyped(got); !reflect.DeepEqual(u, &w) {
		t.Fatalf("%q:\ntyped %+v\n  map %+v", frame, u, &w)
	}
	ah, aerr := DecodeAckMessageRequest(got)
	wh, werr := DecodeAckMessageRequestHeader(want.ExtFields)
	// DeepEqual on purpose: both decoders must build the same error value,
	// wrapped chain included, not merely one that matches errors.Is.
	if ah != wh || !reflect.DeepEqual(aerr, werr) { //nolint:govet // deepequalerrors: see above
		t.Fatalf("%q: ACK typed %+v %v, map %+v %v", frame, ah, aerr, wh, werr)
	}
	ch, cerr := DecodeChangeInvisibleTimeRequest(got)
	wc, wcerr := DecodeChangeInvisibleTimeRequestHeader(want.ExtFields)
	if ch != wc || !reflect.DeepEqual(cerr, wcerr) { //nolint:govet // deepequalerrors: as for ACK

		t.Fatalf("%q: CHANGE typed %+v %v, map %+v %v", frame, ch, cerr, wc, wcerr)
	}
	sh, serr := DecodeSendRequest(got)
	ws, wserr := DecodeSendRequestHeader(want.Code, want.ExtFields)
	if sh != ws || !reflect.DeepEqual(serr, wserr) { //nolint:govet // deepequalerrors: as for ACK
		t.Fatalf("%q: SEND typed %+v %v, map %+v %v", frame, sh, serr, ws, wserr)
	}
	// AppendFields lists every field either way; a typed header in key order.
	gf, wf := got.AppendFields(nil), want.AppendFields(nil)
	if got.typed != nil && got.typed.code != 0 && !slices.IsSortedFunc(gf, func(a, b ExtField) int { return strings.Compare(a.Key, b.Key) }) {
		t.Fatalf("%q: typed AppendFields not in key order: %v", frame, gf)
	}
	byKey := func(a, b ExtField) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(gf, byKey)
	slices.SortFunc(wf, byKey)
	if !slices.Equal(gf, wf) {
		t.Fatalf("%q: AppendFields typed %v, map %v", frame, gf, wf)
	}
	for _, k := range append(slices.Clone(ackFields.keys), sendV2Fields.keys...) {
		wv, wok := want.ExtFields[k]
		if gv, gok := got.Ext(k); gv != wv || gok != wok {
			t.Fatalf("%q: Ext(%q) typed %q %v, map %q %v", frame, k, gv, gok, wv, wok)
		}
	}
	return got
}

// sendV2Header is a SEND_MESSAGE_V2 header as the Java producer writes it.
const sendV2Header = `{"code":310,"extFields":{"a":"P","b":"T","c":"TBW102","d":"4","e":"1","f":"0","g":"1700000000000",` +
	`"h":"0","i":"UNIQ_KEY\u00011\u0002WAIT\u0001true\u0002","j":"0","k":"false","m":"false","n":"b1"},"flag":0,"language":"JAVA","opaque":9,"version":479}`

const ackHeader = `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41",` +
	`"extraInfo":"0 1700000000000 60000 0 0 popshim-a 3 41","bname":"popshim-a"},"flag":0,"language":"JAVA","opaque":9,"version":479}`

func TestTypedHeaderCases(t *testing.T) {
	cases := []struct {
		name, header string
		slots        bool   // fields expected in slots, not ExtFields
		ackErr       string // "" = ok
	}{
		{"ack", ackHeader, true, ""},
		{"change", `{"code":200053,"extFields":{"consumerGroup":"G","topic":"T","queueId":3,"offset":"41","extraInfo":"x","invisibleTime":"60000"}}`, true, ""},
		{"missing topic", `{"code":200051,"extFields":{"consumerGroup":"G","queueId":"3","offset":"41","extraInfo":"x"}}`, true, "the custom field <topic> is null"},
		{"null removes", `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x","topic":null}}`, true, "the custom field <topic> is null"},
		{"invalid queueId", `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3x","offset":"41","extraInfo":"x"}}`, true, `the custom field <queueId> is invalid: "3x"`},
		{"boolean offset", `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":true,"extraInfo":"x"}}`, true, `the custom field <offset> is invalid: "true"`},
		{"last duplicate wins", `{"code":200051,"extFields":{"consumerGroup":"A","consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x"}}`, true, ""},
		{"unknown key: map", `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x","zz":"1"}}`, false, ""},
		{"signed: AccessKey, SecurityToken and Signature in slots", `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x","AccessKey":"ak","Signature":"c2ln","SecurityToken":"tok"}}`, true, ""},
		{"signed with a namespace: map", `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x","AccessKey":"ak","Signature":"c2ln","ns":"n1"}}`, false, ""},
		{"escaped key", `{"code":200051,"extFields":{"consumerGroup":"G","top\u0069c":"T","queueId":"3","offset":"41","extraInfo":"x"}}`, true, ""},
		{"extFields twice", `{"code":200051,"extFields":{"topic":"T"},"extFields":{"consumerGroup":"G","queueId":"3","offset":"41","extraInfo":"x"}}`, true, "the custom field <topic> is null"},
		{"extFields null", `{"code":200051,"extFields":{"topic":"T"},"extFields":null}`, true, "the custom field <consumerGroup> is null"},
		{"code after extFields", `{"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x"},"code":200051}`, false, ""},
		{"code changed after extFields", `{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x"},"code":10}`, false, ""},
		{"other code", `{"code":10,"extFields":{"topic":"T"}}`, false, "the custom field <consumerGroup> is null"},
		{"send v2", sendV2Header, true, "the custom field <consumerGroup> is null"},
		{"send batch", strings.Replace(sendV2Header, "310", "320", 1), true, "the custom field <consumerGroup> is null"},
		{"send reply v2", strings.Replace(sendV2Header, "310", "325", 1), true, "the custom field <consumerGroup> is null"},
		{"send v2 signed", strings.Replace(sendV2Header, `"n":"b1"`, `"n":"b1","AccessKey":"ak","Signature":"c2ln","SecurityToken":"t"`, 1), true, "the custom field <consumerGroup> is null"},
		{"send v2 bname", strings.Replace(sendV2Header, `"n":"b1"`, `"bname":"b2"`, 1), true, "the custom field <consumerGroup> is null"},
		{"send v2 missing topic", strings.Replace(sendV2Header, `"b":"T",`, "", 1), true, "the custom field <consumerGroup> is null"},
		{"send v2 with RpcRequestHeader fields", strings.Replace(sendV2Header, `"n":"b1"`, `"n":"b1","nsd":"true","ns":"x","oway":"false","lo":"true"`, 1), true, "the custom field <consumerGroup> is null"},
		{"send v2 long key: map", strings.Replace(sendV2Header, `"a":"P"`, `"a":"P","aa":"x"`, 1), false, "the custom field <consumerGroup> is null"},
		{"send v2 unknown letter: map", strings.Replace(sendV2Header, `"a":"P"`, `"a":"P","o":"x"`, 1), false, "the custom field <consumerGroup> is null"},
		{"send v1", `{"code":10,"extFields":{"producerGroup":"P","topic":"T","queueId":"1","sysFlag":"0","bornTimestamp":"5","flag":"0"}}`, false, "the custom field <consumerGroup> is null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkTypedMatchesMap(t, headerFrame(c.header))
			if got == nil {
				t.Fatal("frame rejected")
			}
			if slots := got.ExtFields == nil && got.typed != nil && got.typed.code != 0; slots != c.slots {
				t.Fatalf("fields in slots = %v, want %v (ExtFields %v)", slots, c.slots, got.ExtFields)
			}
			_, err := DecodeAckMessageRequest(got)
			var fe *FieldError
			switch {
			case c.ackErr == "" && err != nil:
				t.Fatalf("ACK decode: %v", err)
			case c.ackErr != "" && (err == nil || err.Error() != c.ackErr || !errors.As(err, &fe)):
				t.Fatalf("ACK decode error %v, want %q", err, c.ackErr)
			}
		})
	}
}

// FuzzTypedHeader decodes arbitrary headers (JSON or ROCKETMQ, ACK and
// CHANGE codes among the seeds) with the typed slots and with the map:
// both must accept or reject alike, and yield the same command, the same
// ACK and CHANGE headers and the same field errors.
func FuzzTypedHeader(f *testing.F) {
	f.Add(false, []byte(ackHeader))
	f.Add(false, []byte(`{"code":200053,"extFields":{"consumerGroup":"G","topic":"T","queueId":"3","offset":"41","extraInfo":"x","invisibleTime":"-1","bname":null}}`))
	f.Add(false, []byte(`{"code":200051,"extFields":{"consumerGroup":"G","topic":"T","queueId":"99999999999","offset":"4\u0031","extraInfo":""},"code":200053}`))
	f.Add(false, []byte(sendV2Header))
	f.Add(false, []byte(`{"code":320,"extFields":{"a":"P","b":"T","e":"x","f":null,"g":"1","h":"0","l":"16","bname":"b"}}`))
	ackCode := RequestAckMessage
	c := &Command{Code: int32(int16(ackCode)), Language: "GO", Version: 317, Opaque: 5}
	AckMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 1, Offset: 2, ExtraInfo: "x"}.Encode(c)
	bin := AppendFrameBinary(nil, c)
	f.Add(true, bin[8:])
	c = &Command{Code: RequestSendMessageV2, Language: "JAVA", Version: 479, Opaque: 6}
	SendMessageRequestHeader{ProducerGroup: "P", Topic: "T", QueueID: 1, BornTimestamp: 5, Properties: "a\x01b\x02"}.EncodeV2(c)
	bin = AppendFrameBinary(nil, c)
	f.Add(true, bin[8:])
	for _, s := range goldenSeeds(f) {
		f.Add(s[4] == SerializeRocketMQ, s[8:8+int(binary.BigEndian.Uint32(s[4:])&0xFFFFFF)])
	}
	f.Fuzz(func(t *testing.T, rocketmq bool, header []byte) {
		if len(header) > 1<<16 {
			t.Skip()
		}
		word := uint32(len(header))
		if rocketmq {
			word |= uint32(SerializeRocketMQ) << 24
		}
		frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)))
		frame = binary.BigEndian.AppendUint32(frame, word)
		checkTypedMatchesMap(t, append(frame, header...))
	})
}
