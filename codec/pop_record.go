package codec

import (
	"bytes"
	"encoding/binary"
)

// AppendPopRecord appends the stored record rec, which UnsafeDecodeMessage
// decoded into m, to dst as a POP reply entry: the record's own bytes with
// reconsumeTimes set to reconsumeTimes and the POP_CK property (the receipt
// handle ck) appended to its properties. It copies rec (nothing in dst
// aliases it) and allocates only when dst has no room.
//
// It is the POP fast path of
//
//	m.Properties, _ = SetProperty(m.Properties, PropertyPopCK, ck.String())
//	m.ReconsumeTimes = reconsumeTimes
//	dst, _ = AppendMessage(dst, m)
//
// and produces the same bytes whenever it answers ok, without decoding the
// record into a new one and encoding it again: the header, body and topic
// are copied as stored, the body CRC included (the one difference: a
// stored bodyCRC that is not the body's is kept, where AppendMessage
// computes it; the records popshim stores carry the body's). It answers
// ok=false, with dst unchanged, when rec is not in the form AppendMessage
// writes (magic not the one its topic length selects, IPv6 flags not
// matching the hosts, m not decoded from rec), when the properties already
// hold POP_CK (the general path replaces it), when the receipt handle
// contains a property separator, or when the properties would exceed
// MaxPropertiesLen; the caller then takes the general path, which reports
// such errors.
func AppendPopRecord(dst, rec []byte, m *MessageExt, reconsumeTimes int32, ck *ExtraInfo) ([]byte, bool) {
	size := int(m.StoreSize)
	if size != len(rec) || size != MessageRecordSize(m) ||
		(m.MagicCode == MagicCodeV1) != (len(m.Topic) <= MaxTopicLenV1) ||
		hostSysFlag(m.SysFlag, m.BornHost, m.StoreHost) != m.SysFlag {
		return dst, false
	}
	if _, has := PropertyValue(m.Properties, PropertyPopCK); has {
		return dst, false
	}
	start := len(dst)
	propsAt := size - len(m.Properties) // first byte of the properties
	dst = append(dst, rec[:propsAt]...)
	dst = append(dst, m.Properties...)
	if len(m.Properties) > 0 && m.Properties[len(m.Properties)-1] != PropertySeparator {
		dst = append(dst, PropertySeparator)
	}
	dst = append(dst, PropertyPopCK...)
	dst = append(dst, PropertyNameValueSeparator)
	valueAt := len(dst)
	dst = AppendExtraInfo(dst, ck)
	if bytes.ContainsAny(dst[valueAt:], "\x01\x02") {
		return dst[:start], false
	}
	dst = append(dst, PropertySeparator)
	out := dst[start:]
	propsLen := len(out) - propsAt
	if propsLen > MaxPropertiesLen {
		return dst[:start], false
	}
	be := binary.BigEndian
	be.PutUint32(out[RecordTotalSizePos:], uint32(len(out)))
	be.PutUint16(out[propsAt-2:], uint16(propsLen))
	be.PutUint32(out[reconsumeTimesPos(m.SysFlag):], uint32(reconsumeTimes))
	return dst, true
}

// reconsumeTimesPos returns the position of reconsumeTimes (int32) in a
// record with the given sysFlag: after storeTimestamp and the store host.
func reconsumeTimesPos(sysFlag int32) int {
	return RecordStoreTimestampPos(sysFlag) + 8 + storeHostLen(sysFlag)
}
