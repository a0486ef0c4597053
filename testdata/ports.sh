# free_port (sourced by testdata/bench/lib.sh and testdata/interop/rmq.sh,
# not run): prints a TCP port free on 127.0.0.1, outside the ephemeral range
# (32768-60999) so that a client's outgoing connection cannot take it
# between this pick and the server's bind (a bench-cost RocketMQ broker
# failed with "Address already in use" on a kernel-picked port, 2026-12-05),
# and with nothing answering on it on another address.
free_port() {
  python3 - <<'PY'
import random, socket
for _ in range(200):
    p = random.randint(20000, 32000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    c = socket.socket()
    c.settimeout(0.2)
    busy = c.connect_ex(("127.0.0.1", p)) == 0  # something on 0.0.0.0 or another address
    c.close()
    if not busy:
        print(p)
        break
else:
    raise SystemExit("no free port in 20000-32000")
PY
}
