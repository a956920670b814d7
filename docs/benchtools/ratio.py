#!/usr/bin/env python3
"""ratio.py [JSON] A B [cpu|wall]...: pair-by-pair median (min-max) of B/A for the runs of pair.py"""
import json, sys, statistics
args = sys.argv[1:]
f = "/tmp/pair-last.json"
if args and args[0].endswith(".json"): f = args.pop(0)
d = json.load(open(f))
for i in range(0, len(args), 3):
    a, b, k = args[i], args[i+1], args[i+2]
    j = 0 if k == "cpu" else 1
    r = [y[j]/x[j] for x, y in zip(d[a], d[b])]
    print(f"{b}/{a} {k}: {statistics.median(r):.3f} ({min(r):.3f}-{max(r):.3f}) n={len(r)}")
