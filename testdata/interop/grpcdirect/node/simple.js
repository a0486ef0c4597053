// Produce, receive, change invisible duration and ack with the official
// RocketMQ 5 Node.js SDK (npm rocketmq-client-nodejs 1.0.8) against
// popshim's gRPC endpoint, with no rocketmq-proxy.
//
// Environment:
//   POPSHIM_GRPC_ENDPOINT  host:port of the endpoint (required)
//   POPSHIM_GRPC_TLS       "true" for TLS; the SDK verifies the server certificate with
//                          grpc-js's roots, so point GRPC_DEFAULT_SSL_ROOTS_FILE_PATH at the
//                          PEM of popshim's certificate (or its CA)
//   POPSHIM_GRPC_TOPIC     topic; default a fresh name (needs topic auto-creation)
//   POPSHIM_GRPC_COUNT     messages to send, default 10
//
// Exit status 0 when every message came back with its body, tag, keys and
// property, was changed (even ones) and acked, and nothing came back after
// that; 1 with the reason otherwise. Every wait is bounded.
'use strict';
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');

const INVISIBLE_MS = 10000; // the proxy's floor for simple consumers
const BOUND_MS = 90000; // to receive everything

function fail(msg) {
  console.log('FAIL: ' + msg);
  process.exit(1);
}

async function main() {
  const endpoints = process.env.POPSHIM_GRPC_ENDPOINT;
  if (!endpoints) fail('POPSHIM_GRPC_ENDPOINT is not set');
  const sslEnabled = process.env.POPSHIM_GRPC_TLS === 'true';
  const topic = process.env.POPSHIM_GRPC_TOPIC || `grpcdirect_node_${Date.now()}`;
  const consumerGroup = `grpcdirect_node_cg_${Date.now()}`;
  const count = Number(process.env.POPSHIM_GRPC_COUNT || '10');

  const producer = new Producer({ endpoints, namespace: '', sslEnabled, topics: [ topic ] });
  await producer.startup();
  const sent = new Map();
  try {
    for (let i = 0; i < count; i++) {
      const receipt = await producer.send({
        topic, body: Buffer.from(`grpcdirect node ${i}`), tag: `Tag${i % 2}`,
        keys: [ `key-${i}` ], properties: new Map([[ 'idx', String(i) ]]),
      });
      sent.set(receipt.messageId, i);
    }
  } finally {
    await producer.shutdown();
  }

  const consumer = new SimpleConsumer({
    endpoints, namespace: '', sslEnabled, consumerGroup,
    subscriptions: new Map([[ topic, '*' ]]), awaitDuration: 5000,
  });
  await consumer.startup();
  try {
    const seen = new Set();
    const deadline = Date.now() + BOUND_MS;
    while (seen.size < count && Date.now() < deadline) {
      for (const mv of await consumer.receive(16, INVISIBLE_MS)) {
        const idx = sent.get(mv.messageId);
        if (idx === undefined) fail(`received ${mv.messageId}, never sent`);
        if (seen.has(mv.messageId)) fail(`message ${idx} delivered twice inside its invisible time`);
        if (mv.body.toString() !== `grpcdirect node ${idx}` || mv.tag !== `Tag${idx % 2}`) {
          fail(`message ${idx}: body ${mv.body} tag ${mv.tag}`);
        }
        if (mv.properties.get('idx') !== String(idx) || mv.deliveryAttempt !== 1) {
          fail(`message ${idx}: properties ${[ ...mv.properties ]} attempt ${mv.deliveryAttempt}`);
        }
        seen.add(mv.messageId);
        if (idx % 2 === 0) await consumer.changeInvisibleDuration(mv, 15000);
        await consumer.ack(mv);
      }
    }
    if (seen.size !== count) fail(`received ${seen.size} of ${count} messages`);
    const end = Date.now() + 15000 + 8000;
    while (Date.now() < end) {
      const back = await consumer.receive(16, INVISIBLE_MS);
      if (back.length > 0) fail(`acked message ${back[0].messageId} came back`);
    }
  } finally {
    await consumer.shutdown();
  }
  console.log(`PASS: ${count} messages sent, received, changed/acked (tls=${sslEnabled})`);
}

main().then(() => process.exit(0), err => fail(err && err.stack || String(err)));
