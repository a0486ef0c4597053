package handler

// QUERY_MESSAGE (12).
//
// Header: topic, key, maxNum, beginTimestamp, endTimestamp, all required,
// and the optional 5.5 fields indexType and lastKey
// (QueryMessageRequestHeader.java); the ext field _UNIQUE_KEY_QUERY=true
// (MixAll.UNIQUE_MSG_QUERY_FLAG) marks a look-up by UNIQ_KEY, for which the
// broker uses its defaultQueryMaxNum, 32, as QueryMessageProcessor does.
// indexType "T" looks key up among the TAGS values (5.5's tag index);
// anything else among KEYS and UNIQ_KEY. lastKey is ignored, as by 5.5's
// file-based IndexService (only its RocksDB index pages).
//
// Behaviour: on the reader pool, popstore.Store.QueryMessagesByKey finds
// the messages of topic indexed under key (a KEYS element or a UNIQ_KEY, or
// a tag)
// stored within [beginTimestamp, endTimestamp], at most min(maxNum, 64)
// (maxMsgsNumBatch), the newest when more match, and answers their records
// concatenated in physical-offset order, the layout of a PULL body, which
// the client decodes with MessageDecoder.decodes. The client filters the
// records by key itself (as it does against Java's hash index). The
// response header always carries indexLastUpdateTimestamp and
// indexLastUpdatePhyoffset (the newest entry indexed since start; 0 before
// one). With --message-index-enable=false nothing new is indexed.
//
// Response codes: SUCCESS (0) with the records; QUERY_NOT_FOUND (22) "can
// not find message, maybe time range not correct" when none matched (also
// for an unknown topic, as Java); SYSTEM_ERROR (1) naming a missing or
// unparsable field, or for a store error; SYSTEM_BUSY (2) when the reader
// queue is full. The body stops short of the oldest records that would take
// it past 16 MiB − 256 KiB (the PULL bound; Java sends them all, beyond
// what its client's decoder accepts).

import (
	"bytes"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// defaultQueryMaxNum is MessageStoreConfig.defaultQueryMaxNum: the maxNum of
// a query by unique key.
const defaultQueryMaxNum = 32

// queryNotFoundRemark is QueryMessageProcessor's remark for an empty result.
const queryNotFoundRemark = "can not find message, maybe time range not correct"

func (b *Broker) handleQueryMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeQueryMessageRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	kind := popstore.IndexKeys
	if h.UniqueKey {
		h.MaxNum = defaultQueryMaxNum
	} else if h.IndexType == codec.IndexTypeTags {
		kind = popstore.IndexTags
	}
	job := func() {
		res, err := b.Store.QueryMessagesByKey(h.Topic, kind, h.Key, int(h.MaxNum), b.Settings.MaxPopBytes, h.BeginTimestamp, h.EndTimestamp)
		if err != nil {
			reply.Code(c, req, codec.SystemError, "query message: "+err.Error())
			return
		}
		code, remark := codec.Success, ""
		if len(res.Records) == 0 {
			code, remark = codec.QueryNotFound, queryNotFoundRemark
		}
		resp := codec.NewResponse(req, code, remark)
		codec.QueryMessageResponseHeader{
			IndexLastUpdateTimestamp: res.LastIndexedMillis, IndexLastUpdatePhyoffset: res.LastIndexedPhys,
		}.Encode(resp)
		if len(res.Records) > 0 {
			resp.Body = bytes.Join(res.Records, nil)
		}
		reply.Respond(c, req, resp)
	}
	if !b.submitLargeRead(c, req, job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}
