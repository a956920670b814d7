#!/bin/bash
# rss.sh BIN ROUNDS: peak RSS (KiB) of BIN mpc (its default settings) on
# /tmp/b100, b200 and b400: unpartitioned on 1 core, and 12 partitions with
# 1 and 2 workers. The traces (docs/bench.md, "Workers with readers of their
# own"): for N in 100 200 400, with pages 2250000, 4500000, 9000000:
#   mdk gen --pages PAGES --windows 240 -o /tmp/bN.mdkt
#   mdk convert --partitions 12 /tmp/bN.mdkt /tmp/bN-p12.mdkt
# Prints one line a run: trace, gGOMAXPROCS, KiB.
B=$1
for i in $(seq "$2"); do
  for s in 100 200 400; do
    for spec in "b$s 1" "b$s-p12 1" "b$s-p12 2"; do
      set -- $spec
      /usr/bin/time -f "$1 g$2 %M" env GOMAXPROCS="$2" "$B" mpc "/tmp/$1.mdkt" >/dev/null
    done
  done
done 2>&1
