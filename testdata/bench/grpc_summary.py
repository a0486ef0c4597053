"""Summary of a `make bench-grpc` run (testdata/bench/grpc.sh): one Markdown table of the medians over
the rounds per system and workload, the ratios against the direct endpoint (or, when it was skipped,
against proxy-popshim), and the goals.

Usage: grpc_summary.py OUT_DIR ROCKETMQ_VERSION SKIP_NOTE
Reads OUT_DIR/KIND-LABEL[-rK].json (popshim bench --json reports), KIND one of send and consume (open loop),
fixed and fixedrecv (grpc-send and grpc-receive at GBENCH_P99_RATE on every system), pacedRATE (grpc-send and
produce on popshim at RATE messages/s).
"""
import glob
import json
import os
import re
import statistics
import sys

out, rmqver, skipped = sys.argv[1], sys.argv[2], sys.argv[3]
DIRECT, PROXY_POPSHIM, PROXY_RMQ, REMOTING = "popshim-grpc", "proxy-popshim", f"proxy-rocketmq-{rmqver}", "popshim-remoting"
FLOOR = "grpc-go-floor"  # bench grpc-floor-server: grpc-go alone, storing nothing (send only)
LABELS = [DIRECT, FLOOR, PROXY_POPSHIM, PROXY_RMQ, REMOTING]
MAIN = {"grpc-send": "send", "produce": "send", "grpc-receive": "acked", "pop": "ack"}
# per-call series shown beside the main one: (column, series) per mode
CALLS = {"grpc-send": [("send", "send")], "produce": [("send", "send")],
         "grpc-receive": [("receive", "receive"), ("ack", "ack")], "pop": [("receive", "pop"), ("ack", "ack")]}


def series(r, name):
    return next((s for s in r["series"] if s["name"] == name), None)


def row(r):
    """The values of one report: msgs/s, p99s in ms, CPU."""
    m = series(r, MAIN[r["mode"]])
    v = {"ops": m["ops_per_sec"], "p50": m["latency_us"]["p50"] / 1000, "p99": m["latency_us"]["p99"] / 1000,
         "errors": sum(s["errors"] + s["system_busy"] for s in r["series"]),
         "bench": r["bench_cpu"]["percent"], "load": r["machine"]["loadavg1"]}
    for col, name in CALLS[r["mode"]]:
        s = series(r, name)
        v[col + "_p99"] = s["latency_us"]["p99"] / 1000 if s and s["ok"] else float("nan")
    cpu = r.get("server_cpu")
    v["server"] = cpu["percent"] if cpu else float("nan")
    v["cpu_per_msg"] = 1e4 * v["server"] / v["ops"] if cpu and v["ops"] > 0 else float("nan")
    return v


def med(rows, k):
    xs = [x[k] for x in rows if k in x and x[k] == x[k]]
    return statistics.median(xs) if xs else float("nan")


data = {}  # (kind, label) -> list of rows (one per round)
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    m = re.match(r"(send|consume|fixed|fixedrecv|paced\d*)-(.+?)(-r\d+)?\.json$", os.path.basename(path))
    if not m:
        continue
    r = json.load(open(path))
    data.setdefault((m.group(1), r["label"]), []).append(row(r))

cols = ["ops", "p50", "p99", "send_p99", "receive_p99", "ack_p99", "server", "cpu_per_msg", "bench", "errors", "load"]
medians = {key: {c: med(rows, c) for c in cols} for key, rows in data.items()}


def f(v, fmt):
    return "n/a" if v != v else fmt.format(v)


print("Medians over the rounds (rounds per system in brackets). msgs/s: messages stored (send) or acked "
      "(consume); p99 ms of one message's call (send) or of its cycle, receive start to ack reply (consume), "
      "then p99 of each call; server CPU in % of one core and µs per message (proxy + broker for the proxy "
      "systems).\n")
print("| workload | system | msgs/s | p50 ms | p99 ms | send p99 | receive p99 | ack p99 | server CPU % | "
      "server CPU µs/msg | bench CPU % | errors | load |")
print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
PACED = sorted({k for k, _ in data if k.startswith("paced")}, key=lambda k: int(k[5:] or 0))
KINDS = ["send", "consume", "fixed", "fixedrecv"] + PACED
KIND_NAME = {"fixed": "send at the p99 rate", "fixedrecv": "consume at the p99 rate"}
for kind in KINDS:
    for label in LABELS:
        v = medians.get((kind, label))
        if not v:
            continue
        print(f"| {KIND_NAME.get(kind, kind)} | {label} ({len(data[(kind, label)])}) | {f(v['ops'], '{:,.0f}')} | {f(v['p50'], '{:.2f}')} | "
              f"{f(v['p99'], '{:.1f}')} | {f(v['send_p99'], '{:.1f}')} | {f(v['receive_p99'], '{:.1f}')} | "
              f"{f(v['ack_p99'], '{:.1f}')} | {f(v['server'], '{:.0f}')} | {f(v['cpu_per_msg'], '{:.0f}')} | "
              f"{f(v['bench'], '{:.0f}')} | {v['errors']:.0f} | {f(v['load'], '{:.1f}')} |")


def ratio(a, b):
    return a / b if a == a and b == b and b else float("nan")


def x(v):
    return f(v, "{:.2f}×")


ours = DIRECT if any(k[1] == DIRECT for k in medians) else PROXY_POPSHIM
print()
if ours != DIRECT:
    print(f"popshim-grpc was skipped: {skipped or 'not among GBENCH_SYSTEMS'}. Ratios are of {ours}.\n")
print(f"| workload | {ours} vs | throughput ratio (ours ÷ theirs) | p99 theirs ÷ ours | server CPU per msg theirs ÷ ours |")
print("|---|---|--:|--:|--:|")
for kind in ("send", "consume", "fixed", "fixedrecv"):
    o = medians.get((kind, ours))
    if not o:
        continue
    for label in LABELS:
        t = medians.get((kind, label))
        if label == ours or not t:
            continue
        print(f"| {KIND_NAME.get(kind, kind)} | {label} | {x(ratio(o['ops'], t['ops']))} | {x(ratio(t['p99'], o['p99']))} | "
              f"{x(ratio(t['cpu_per_msg'], o['cpu_per_msg']))} |")

print("\nGoals (medians):")
for kind in ("send", "consume"):
    d, p, rem = medians.get((kind, DIRECT)), medians.get((kind, PROXY_RMQ)), medians.get((kind, REMOTING))
    if not d:
        print(f"- {kind}: popshim-grpc not measured ({skipped or 'skipped'}): goals not assessed")
        continue
    if p:
        tr, lr = ratio(d["ops"], p["ops"]), ratio(p["p99"], d["p99"])
        print(f"- {kind}: throughput {x(tr)} proxy + RocketMQ (goal ≥ 3×: {'met' if tr >= 3 else 'not met'}); "
              f"p99 {f(ratio(d['p99'], p['p99']), '{:.2f}')} of theirs (goal ≤ 0.20: {'met' if lr >= 5 else 'not met'})")
    if rem:
        cr = ratio(d["cpu_per_msg"], rem["cpu_per_msg"])
        print(f"- {kind}: server CPU per message {x(cr)} popshim's remoting path "
              f"(goal ≤ 1.3×: {'met' if cr <= 1.3 else 'not met'})")
    fl = medians.get((kind, FLOOR))
    if fl:
        print(f"- {kind}: server CPU per message {x(ratio(d['cpu_per_msg'], fl['cpu_per_msg']))} grpc-go's own floor "
              f"({f(fl['cpu_per_msg'], '{:.0f}')} of {f(d['cpu_per_msg'], '{:.0f}')} µs: {FLOOR}, storing nothing)"
              + (f"; the floor alone is {x(ratio(fl['cpu_per_msg'], rem['cpu_per_msg']))} popshim's remoting path"
                 if rem else ""))
for kind, what in (("fixed", "send"), ("fixedrecv", "consume")):
    d, p = medians.get((kind, DIRECT)), medians.get((kind, PROXY_RMQ))
    if d and p:
        lr = ratio(p["p99"], d["p99"])
        print(f"- {what} at an equal paced rate ({d['ops']:,.0f} and {p['ops']:,.0f} msgs/s): p99 "
              f"{f(ratio(d['p99'], p['p99']), '{:.2f}')} of proxy + RocketMQ's (goal ≤ 0.20: {'met' if lr >= 5 else 'not met'})")
for kind in PACED:
    d, rem = medians.get((kind, DIRECT)), medians.get((kind, REMOTING))
    if d and rem:
        cr = ratio(d["cpu_per_msg"], rem["cpu_per_msg"])
        print(f"- send at an equal paced rate ({d['ops']:,.0f} and {rem['ops']:,.0f} msgs/s): server CPU per message "
              f"{x(cr)} popshim's remoting path (goal ≤ 1.3×: {'met' if cr <= 1.3 else 'not met'})")
