package handler

// GET_ALL_PRODUCER_INFO (328).
//
// Header: none read (GetAllProducerInfoRequestHeader.java has no field).
//
// Behaviour: every producer group with a live client that announced itself
// with HEART_BEAT, each client as a ProducerInfo (clientId, remoteIP as
// Java prints a channel's address, "/ip:port", language, version ordinal,
// lastUpdateTimestamp of its last heartbeat), as
// AdminBrokerProcessor.getAllProducerInfo answers from
// ProducerManager.getProducerTable; mqadmin `producer -b` prints one line
// per client. gRPC producers are listed too, under each topic of their
// Settings (grpcserver/heartbeat.go registers them so, as the proxy's
// heartbeats make them appear on a Java broker). Memory only: answered on
// the event loop.
//
// Response codes: SUCCESS (0), with {"data":{}} when no producer is live.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetAllProducerInfo(c remoting.Conn, req *codec.Command) {
	groups := b.Clients.ProducerGroups()
	table := codec.ProducerTableInfo{Data: make(map[string][]codec.ProducerInfo, len(groups))}
	for group, chs := range groups {
		infos := make([]codec.ProducerInfo, 0, len(chs))
		for _, ch := range chs {
			infos = append(infos, codec.ProducerInfo{
				ClientID: ch.ClientID, RemoteIP: "/" + ch.RemoteAddr, Language: ch.Language,
				Version: ch.Version, LastUpdateTimestamp: ch.LastUpdateMillis,
			})
		}
		table.Data[group] = infos
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeProducerTableInfo(table)
	reply.Respond(c, req, resp)
}
