# free_port (sourced by testdata/bench/lib.sh and testdata/interop/rmq.sh,
# not run): prints a TCP port free on 127.0.0.1, outside the ephemeral range
# (32768-60999) so that a client's outgoing connection cannot take it
# between this pick and the server's bind (a bench-cost RocketMQ broker
# failed with "Address already in use" on a kernel-picked port, 2026-12-05),
# and with nothing answering on it on another address. Ports it printed
# before in this script (and its subshells and lanes: the file is named
# after the top-level shell's $$) are not printed again: a port picked but
# not yet bound looks free, and one interop start drew the same port for
# --grpc-listen and another listener (2026-12-05).
free_port() {
  PORTS_FILE="${work:-${TMPDIR:-/tmp}}/.free-ports.$$" python3 - <<'PY'
import fcntl, os, random, socket
path = os.environ["PORTS_FILE"]
with open(path, "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    taken = {int(x) for x in f.read().split() if x.isdigit()}
    for _ in range(200):
        p = random.randint(20000, 32000)
        if p in taken:
            continue
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
            f.write(f"{p}\n")
            print(p)
            break
    else:
        raise SystemExit("no free port in 20000-32000")
PY
}
