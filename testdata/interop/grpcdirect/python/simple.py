"""Produce, receive, change invisible duration and ack with the official
RocketMQ 5 Python SDK (PyPI rocketmq-python-client 5.1.2) against popshim's
gRPC endpoint, with no rocketmq-proxy.

Environment:
  POPSHIM_GRPC_ENDPOINT  host:port of the endpoint (required)
  POPSHIM_GRPC_TLS       "true" for TLS; the SDK verifies the server certificate
                         with gRPC's roots, so point GRPC_DEFAULT_SSL_ROOTS_FILE_PATH
                         at the PEM of popshim's certificate (or its CA)
  POPSHIM_GRPC_TOPIC     topic; default a fresh name (needs topic auto-creation)
  POPSHIM_GRPC_COUNT     messages to send, default 10

Exit status 0 when every message came back with its body, tag, keys and
property, was changed (even ones) and acked, and nothing came back after
that; 1 with the reason otherwise. Every wait is bounded.
"""
import os
import sys
import time

from rocketmq import (ClientConfiguration, Credentials, FilterExpression,
                      Message, Producer, SimpleConsumer)

INVISIBLE = 10  # seconds; the proxy's floor for simple consumers
BOUND = 90      # seconds to receive everything


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def main():
    endpoint = os.environ.get("POPSHIM_GRPC_ENDPOINT")
    if not endpoint:
        fail("POPSHIM_GRPC_ENDPOINT is not set")
    tls = os.environ.get("POPSHIM_GRPC_TLS") == "true"
    topic = os.environ.get("POPSHIM_GRPC_TOPIC") or "grpcdirect_py_%d" % time.time_ns()
    group = "grpcdirect_py_cg_%d" % time.time_ns()
    count = int(os.environ.get("POPSHIM_GRPC_COUNT", "10"))
    config = ClientConfiguration(endpoint, Credentials())

    producer = Producer(config, (topic,), tls_enable=tls)
    producer.startup()
    sent = {}
    try:
        for i in range(count):
            m = Message()
            m.topic = topic
            m.body = ("grpcdirect py %d" % i).encode()
            m.tag = "Tag%d" % (i % 2)
            m.keys = "key-%d" % i
            m.add_property("idx", str(i))
            receipt = producer.send(m)
            sent[receipt.message_id] = i
    finally:
        producer.shutdown()

    consumer = SimpleConsumer(config, group, {topic: FilterExpression()}, await_duration=5, tls_enable=tls)
    consumer.startup()
    try:
        seen = set()
        deadline = time.time() + BOUND
        while len(seen) < count and time.time() < deadline:
            for mv in consumer.receive(16, INVISIBLE) or []:
                idx = sent.get(mv.message_id)
                if idx is None:
                    fail("received %s, never sent" % mv.message_id)
                if mv.message_id in seen:
                    fail("message %d delivered twice inside its invisible time" % idx)
                if mv.body != ("grpcdirect py %d" % idx).encode() or mv.tag != "Tag%d" % (idx % 2):
                    fail("message %d: body %r tag %r" % (idx, mv.body, mv.tag))
                if mv.properties.get("idx") != str(idx) or mv.delivery_attempt != 1:
                    fail("message %d: properties %r attempt %r" % (idx, mv.properties, mv.delivery_attempt))
                seen.add(mv.message_id)
                if idx % 2 == 0:
                    consumer.change_invisible_duration(mv, 15)
                consumer.ack(mv)
        if len(seen) != count:
            fail("received %d of %d messages" % (len(seen), count))
        end = time.time() + 15 + 8
        while time.time() < end:
            back = consumer.receive(16, INVISIBLE) or []
            if back:
                fail("acked message %s came back" % back[0].message_id)
    finally:
        consumer.shutdown()
    print("PASS: %d messages sent, received, changed/acked (tls=%s)" % (count, tls), flush=True)


if __name__ == "__main__":
    main()
