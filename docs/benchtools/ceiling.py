#!/usr/bin/env python3
"""ceiling.py ROUNDS BIN PARTTRACE UNPARTTRACE [OLDBIN]: paired rounds of
 a: GOMAXPROCS=1 BIN mpc PART alone; b: two of a at once (wall until both end);
 c: GOMAXPROCS=2 BIN mpc PART; d: GOMAXPROCS=1 BIN mpc UNPART; e: two of d at once;
 with OLDBIN, f: GOMAXPROCS=2 OLDBIN mpc PART (the 2-worker pass before a change).
prints medians/ranges of ceiling 2a/b, own speed-up a/c, against unpartitioned d/c, unpartitioned ceiling 2d/e, CPU a/d;
with OLDBIN also a/f, d/f and the new 2-worker pass against the old one, f/c (wall) and CPU c/f."""
import os, sys, time, statistics
R, B, P, U = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
OLD = sys.argv[5] if len(sys.argv) > 5 else None
def spawn(gm, tr, b=None):
    b = b or B
    pid = os.fork()
    if pid == 0:
        fd = os.open("/dev/null", os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
        os.execve(b, [b, "mpc", tr], dict(os.environ, GOMAXPROCS=str(gm)))
    return pid
def steal():
    return int(open("/proc/stat").readline().split()[8])
def run(specs):
    s0 = steal()
    t0 = time.monotonic(); cpu = 0
    pids = [spawn(*spec) for spec in specs]
    for p in pids:
        _, st, ru = os.wait4(p, 0); cpu += ru.ru_utime + ru.ru_stime
        assert st == 0
    wall = time.monotonic() - t0
    return wall, cpu, (steal() - s0) / 100.0 / wall  # stolen CPU-s per wall-s (0..2)
keys = "abcdef" if OLD else "abcde"
res = {k: [] for k in keys}
run([(1, P)]); run([(1, U)])
for i in range(R):
    res["a"].append(run([(1, P)])); res["b"].append(run([(1, P), (1, P)]))
    res["c"].append(run([(2, P)])); res["d"].append(run([(1, U)])); res["e"].append(run([(1, U), (1, U)]))
    if OLD:
        res["f"].append(run([(2, P, OLD)]))
st = [max(res[k][i][2] for k in keys) for i in range(R)]
print("steal per round (max over its runs, CPUs stolen)", " ".join(f"{x:.2f}" for x in st))
def m(xs): return f"{statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"
w = {k: [x[0] for x in v] for k, v in res.items()}; c = {k: [x[1] for x in v] for k, v in res.items()}
print("wall a (1 worker)", m(w["a"]), "c (2 workers)", m(w["c"]), "d (unpart 1 core)", m(w["d"]))
print("CPU a", m(c["a"]), "c", m(c["c"]), "d", m(c["d"]))
print("ceiling partitioned 2a/b", m([2*a/b for a, b in zip(w["a"], w["b"])]))
print("ceiling unpartitioned 2d/e", m([2*a/b for a, b in zip(w["d"], w["e"])]))
print("own speed-up a/c", m([a/b for a, b in zip(w["a"], w["c"])]))
print("vs unpartitioned d/c", m([a/b for a, b in zip(w["d"], w["c"])]))
print("1-core CPU a/d", m([a/b for a, b in zip(c["a"], c["d"])]))
if OLD:
    print("old 2 workers: wall f", m(w["f"]), "CPU f", m(c["f"]))
    print(" own a/f", m([a/b for a, b in zip(w["a"], w["f"])]), " d/f", m([a/b for a, b in zip(w["d"], w["f"])]))
    print(" new against old, wall f/c", m([a/b for a, b in zip(w["f"], w["c"])]), " CPU c/f", m([a/b for a, b in zip(c["c"], c["f"])]))
low = [i for i in range(R) if st[i] <= 0.05]
if low:
    print(f"rounds with steal <= 0.05 CPU: {len(low)}")
    pick = lambda k: [res[k][i] for i in low]
    print(" ceiling 2a/b", m([2*a[0]/b[0] for a, b in zip(pick("a"), pick("b"))]), " own a/c", m([a[0]/c[0] for a, c in zip(pick("a"), pick("c"))]), " d/c", m([d[0]/c[0] for d, c in zip(pick("d"), pick("c"))]), " unpart ceiling", m([2*d[0]/e[0] for d, e in zip(pick("d"), pick("e"))]))
    if OLD:
        print(" old: own a/f", m([a[0]/f[0] for a, f in zip(pick("a"), pick("f"))]), " d/f", m([d[0]/f[0] for d, f in zip(pick("d"), pick("f"))]), " new against old f/c", m([f[0]/c[0] for f, c in zip(pick("f"), pick("c"))]))
print("load", open("/proc/loadavg").read().strip())
