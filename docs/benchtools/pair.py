#!/usr/bin/env python3
"""pair.py ROUNDS NAME=BIN:'ARGS' ...  -- runs each command in turn, ROUNDS times after one warm-up,
reads CPU (user+sys) and peak RSS from wait4, prints medians and pair-by-pair ratios against the first."""
import os, sys, shlex, time, statistics
rounds = int(sys.argv[1])
cmds = []
for spec in sys.argv[2:]:
    name, rest = spec.split("=", 1)
    binp, args = rest.split(":", 1)
    cmds.append((name, binp, shlex.split(args)))
def run(binp, args):
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open("/dev/null", os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
        os.execv(binp, [binp] + args)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    if status != 0: print("FAILED", binp, args, status, file=sys.stderr)
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss
res = {n: [] for n, _, _ in cmds}
for n, b, a in cmds: run(b, a)
for r in range(rounds):
    for n, b, a in cmds: res[n].append(run(b, a))
base = cmds[0][0]
for n, _, _ in cmds:
    cpu = [x[0] for x in res[n]]; wall = [x[1] for x in res[n]]; rss = [x[2] for x in res[n]]
    line = f"{n}: cpu {statistics.median(cpu):.4f} ({min(cpu):.4f}-{max(cpu):.4f}) wall {statistics.median(wall):.4f} rss {min(rss)//1024}-{max(rss)//1024} MB"
    if n != base:
        rc = [a[0]/b[0] for a, b in zip(res[n], res[base])]; rw = [a[1]/b[1] for a, b in zip(res[n], res[base])]
        line += f" | vs {base}: cpu {statistics.median(rc):.3f} ({min(rc):.3f}-{max(rc):.3f}) wall {statistics.median(rw):.3f}"
    print(line)
import json
json.dump({n: res[n] for n, _, _ in cmds}, open(os.environ.get("PAIR_JSON", "/tmp/pair-last.json"), "w"))
print("load", open("/proc/loadavg").read().strip())
