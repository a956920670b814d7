#!/usr/bin/env bash
# e2e.sh: the end-to-end experiment of docs/e2e.md on a real application, in
# the custom guest kernel (idle page tracking, zram): memcached from Debian,
# driven by mdk's Zipf load with a hot-set shift part way;
#   1. a baseline with no reclaim, recorded with mdk record --pid;
#   2. mdk tune on the recording picks a setting per policy for the SLO;
#   3. each setting deployed with mdk agent --pid on a fresh memcached under
#      the same load;
#   4. mdk agent compare RUN --predicted-from the recording.
# It runs agent's TestE2EInGuest with the parameters below (CI runs the
# same test with its short defaults) and extracts the results into $OUT:
# load-NAME.csv (throughput, latency percentiles, the server's RSS and swap
# per window: the business metric) and compare-SETTING.txt.
#
# Usage: bash internal/vmtest/e2e.sh [OUT]   (as root; needs memcached,
# qemu-system-x86, busybox-static and the cached custom kernel: kernel.sh)
set -euo pipefail

# ---- parameters ---------------------------------------------------------
WINDOW=${WINDOW:-5s}          # window of the recording and of the agent
WINDOWS=${WINDOWS:-24}        # windows per run
KEYS=${KEYS:-20000}           # keys stored in memcached
VALUE=${VALUE:-4000}          # bytes per value (one page, about)
SKEW=${SKEW:-1.2}             # Zipf exponent of key popularity (> 1)
SETS=${SETS:-0.05}            # fraction of operations that write
SHIFT_AT=${SHIFT_AT:-12}      # window from which the hot set moves
SLO=${SLO:-max_pr<=2%}        # mdk tune's SLO
POLICIES=${POLICIES:-age,paw} # policies tuned and deployed
ZRAM_MIB=${ZRAM_MIB:-512}     # zram swap in the guest
MEMCACHED_MIB=${MEMCACHED_MIB:-160} # memcached -m
# --------------------------------------------------------------------------

OUT=${1:-e2e-out}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
export PATH="$PATH:/usr/local/go/bin"
mkdir -p "$OUT"
export CI=true MDK_E2E_WINDOW=$WINDOW MDK_E2E_WINDOWS=$WINDOWS MDK_E2E_KEYS=$KEYS \
  MDK_E2E_VALUE=$VALUE MDK_E2E_SKEW=$SKEW MDK_E2E_SETS=$SETS MDK_E2E_SHIFT_AT=$SHIFT_AT \
  MDK_E2E_SLO=$SLO MDK_E2E_POLICIES=$POLICIES MDK_E2E_ZRAM_MIB=$ZRAM_MIB MDK_E2E_MEMCACHED_MIB=$MEMCACHED_MIB
t0=$SECONDS
go test -count=1 -run '^TestE2EInGuest$' -v -timeout 3h ./agent >"$OUT/test.log" 2>&1 || {
  echo "e2e.sh: the test failed; see $OUT/test.log" >&2; tail -30 "$OUT/test.log" >&2; exit 1; }
echo "e2e.sh: done in $((SECONDS - t0)) s; results in $OUT" >&2
# The load's lines: "e2e-load NAME CSV", the header first.
for name in $(grep -o 'e2e-load [a-z]* window,' "$OUT/test.log" | awk '{print $2}' | sort -u); do
  grep -o "e2e-load $name .*" "$OUT/test.log" | sed "s/^e2e-load $name //" | awk '!seen[$0]++' >"$OUT/load-$name.csv"
done
# The side-by-sides: each "e2e-compare SETTING" log entry, to the next entry.
awk -v out="$OUT" '
  /e2e-compare / { f = $NF; gsub(/[:=,]/, "_", f); f = out "/compare-" f ".txt"; p = 1; ind = -1; next }
  p && (/^ *[a-zA-Z0-9_]+\.go:[0-9]+:/ || /^ *(=== |--- |PASS$|FAIL|ok )/) { p = 0 }
  p { if (ind < 0) { match($0, /^ */); ind = RLENGTH } print substr($0, ind + 1) > f }' "$OUT/test.log"
ls -l "$OUT"
