#!/usr/bin/env bash
# e2e.sh: the end-to-end experiment of docs/e2e.md on real applications, in
# the custom guest kernel (idle page tracking, zram), one application at a
# time (APPS):
#   memcached  Debian's memcached on TCP loopback, driven by mdk's Zipf load
#              with a hot-set shift part way (workload.KV);
#   sqlite     Debian's sqlite3 shell on an in-memory database, running a
#              batch job with periodic passes and Zipf lookups with a
#              hot-set shift (workload.SQL);
# for each:
#   1. a baseline with no reclaim, recorded with mdk record --pid;
#   2. mdk tune on the recording picks a setting per policy for the SLO;
#   3. each setting deployed with mdk agent --pid on a fresh application
#      under the same load;
#   4. mdk agent compare RUN --predicted-from the recording.
# It runs internal/e2e's TestE2EInGuest (memcached) and
# TestE2ESQLiteInGuest (sqlite) with the parameters below (CI runs the same
# tests with their short defaults) and extracts into $OUT/APP:
#   load-NAME.csv      the load's windows (throughput, latency percentiles,
#                      the application's RSS and swap: the business metric);
#   compare-SETTING.txt mdk agent compare --predicted-from's side-by-side;
#   curves-NAME.txt    the best age and paw setting at targets of the SLO's
#                      statistic on the recording and on each run's trace;
#   rec.mdkt, run-POLICY/  the recording and the agent's run directories,
#                      so that every number can be recomputed on the host
#                      (mdk agent compare $OUT/APP/run-age --predicted-from
#                      $OUT/APP/rec.mdkt, mdk mpc, mdk diff ...);
#   business.csv       the paper's table per run: throughput, p99, pass time,
#                      RSS, swap, the zram device's memory, net memory;
#   test.log           the whole log.
#
# Usage: bash internal/vmtest/e2e.sh [OUT]   (as root; needs memcached,
# sqlite3, qemu-system-x86, busybox-static and the cached custom kernel:
# kernel.sh). EXTRACT=1 bash internal/vmtest/e2e.sh OUT extracts the files
# again from OUT/APP/test.log without running anything.
set -euo pipefail

# ---- parameters ---------------------------------------------------------
APPS=${APPS:-memcached sqlite} # applications, in order
WINDOW=${WINDOW:-5s}          # window of the recording and of the agent
WINDOWS=${WINDOWS:-40}        # windows per run
SHIFT_AT=${SHIFT_AT:-20}      # window from which the loads' hot set moves
SLO=${SLO:-max_pr<=5%}        # mdk tune's SLO
POLICIES=${POLICIES:-age paw} # policy specs tuned and deployed, space-separated
ZRAM_MIB=${ZRAM_MIB:-512}     # zram swap in the guest
# memcached
KEYS=${KEYS:-20000}           # keys stored in memcached
VALUE=${VALUE:-4000}          # bytes per value (one page, about)
SKEW=${SKEW:-1.2}             # Zipf exponent of key popularity (> 1)
SETS=${SETS:-0.05}            # fraction of operations that write
MEMCACHED_MIB=${MEMCACHED_MIB:-160} # memcached -m
NET=${NET:-tcp}               # tcp (127.0.0.1:11211) or unix (a socket)
MEMCACHED_OPTS=${MEMCACHED_OPTS:-} # more memcached arguments, e.g. "-o no_lru_crawler"
# sqlite (rows of SQL_ROW bytes: one database page each)
SQL_HOT=${SQL_HOT:-4000}      # rows scanned in every window
SQL_FACT=${SQL_FACT:-1600}    # rows scanned a partition a window
SQL_PERIOD=${SQL_PERIOD:-8}   # partitions of fact: its pages' reuse period
SQL_WARM=${SQL_WARM:-3000}    # rows read by Zipf lookups
SQL_ROW=${SQL_ROW:-3000}      # bytes of text a row
SQL_SKEW=${SQL_SKEW:-1.2}     # Zipf exponent of the lookups (> 1)
# --------------------------------------------------------------------------

OUT=${1:-e2e-out}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
export PATH="$PATH:/usr/local/go/bin"
export CI=true MDK_E2E_DUMP=1 MDK_E2E_WINDOW=$WINDOW MDK_E2E_WINDOWS=$WINDOWS MDK_E2E_SHIFT_AT=$SHIFT_AT \
  MDK_E2E_SLO=$SLO MDK_E2E_POLICIES=$POLICIES MDK_E2E_ZRAM_MIB=$ZRAM_MIB
for app in $APPS; do
  dir=$OUT/$app
  mkdir -p "$dir"
  case $app in
  memcached)
    test=TestE2EInGuest
    export MDK_E2E_KEYS=$KEYS MDK_E2E_VALUE=$VALUE MDK_E2E_SKEW=$SKEW MDK_E2E_SETS=$SETS \
      MDK_E2E_MEMCACHED_MIB=$MEMCACHED_MIB MDK_E2E_NET=$NET MDK_E2E_MEMCACHED_OPTS=$MEMCACHED_OPTS ;;
  sqlite)
    test=TestE2ESQLiteInGuest
    export MDK_E2E_SQL_HOT=$SQL_HOT MDK_E2E_SQL_FACT=$SQL_FACT MDK_E2E_SQL_PERIOD=$SQL_PERIOD \
      MDK_E2E_SQL_WARM=$SQL_WARM MDK_E2E_SQL_ROW=$SQL_ROW MDK_E2E_SKEW=$SQL_SKEW ;;
  *) echo "e2e.sh: unknown application $app (memcached, sqlite)" >&2; exit 2 ;;
  esac
  t0=$SECONDS
  if [ -z "${EXTRACT:-}" ]; then
    go test -count=1 -run "^$test\$" -v -timeout 3h ./internal/e2e >"$dir/test.log" 2>&1 || {
      echo "e2e.sh: $app: the test failed; see $dir/test.log" >&2; tail -30 "$dir/test.log" >&2; exit 1; }
    echo "e2e.sh: $app done in $((SECONDS - t0)) s; results in $dir" >&2
  fi
  log=$dir/test.log
  # The load's lines: "e2e-load NAME CSV", the header first.
  for name in $(grep -o 'e2e-load [a-z]* window,' "$log" | awk '{print $2}' | sort -u); do
    grep -o "e2e-load $name .*" "$log" | sed "s/^e2e-load $name //" | awk '!seen[$0]++' >"$dir/load-$name.csv"
  done
  # The side-by-sides and the curves: each "e2e-compare SETTING" or
  # "e2e-curves NAME" log entry, to the next entry.
  awk -v out="$dir" '
    /e2e-compare / || /e2e-curves / { f = $NF; gsub(/[:=,]/, "_", f); k = /e2e-compare / ? "compare-" : "curves-"
      f = out "/" k f ".txt"; p = 1; ind = -1; next }
    p && (/^ *[a-zA-Z0-9_]+\.go:[0-9]+:/ || /^ *(=== |--- |PASS$|FAIL|ok )/ || /e2e-file /) { p = 0 }
    p { if (ind < 0) { match($0, /^ */); ind = RLENGTH } print substr($0, ind + 1) > f }' "$log"
  # The files: "e2e-file NAME BASE64" lines, in order.
  for name in $(grep -o 'e2e-file [^ ]*' "$log" | awk '{print $2}' | sort -u); do
    mkdir -p "$dir/$(dirname "$name")"
    grep -o "e2e-file $name .*" "$log" | awk '{print $3}' | tr -d '\n' | base64 -d >"$dir/$name"
  done
  # The business metric, one row a run: the load's windows (mean
  # throughput, median and worst p99 latency, the mean pass time of
  # sqlite's batch job), the application's memory as the kernel counts it
  # (mean VmRSS and VmSwap over the load's windows, VmSwap at the end) and
  # the zram device's own memory (mean over the agent's windows of
  # zram_mem_bytes; the baseline has none): net memory = RSS + zram.
  {
    echo "run,windows,ops_per_sec_mean,p99_ms_median,p99_ms_max,pass_ms_mean,rss_mb_mean,swap_mb_mean,swap_mb_end,zram_mb_mean,net_mb_mean"
    for csv in "$dir"/load-baseline.csv "$dir"/load-[!b]*.csv; do
      [ -e "$csv" ] || continue
      name=$(basename "$csv" .csv); name=${name#load-}
      zram=0
      if [ -e "$dir/run-$name/measured.csv" ]; then
        zram=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "zram_mem_bytes") c = i; next }
          { s += $c; n++ } END { printf "%.1f", n ? s / n / 1048576 : 0 }' "$dir/run-$name/measured.csv")
      fi
      c=$(head -1 "$csv" | tr , '\n' | grep -n '^p99_us$' | cut -d: -f1)
      med=$(tail -n +2 "$csv" | cut -d, -f"$c" | sort -g | awk '{ a[NR] = $1 }
        END { printf "%.2f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }')
      awk -F, -v name="$name" -v zram="$zram" -v med="$med" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { n++; ops += $col["ops_per_sec"]; p99 = $col["p99_us"] / 1000; if (p99 > pmax) pmax = p99
          if ("pass_ms" in col) pass += $col["pass_ms"]
          rss += $col["rss_kb"]; swap += $col["swap_kb"]; swapend = $col["swap_kb"] }
        END {
          printf "%s,%d,%.1f,%.2f,%.2f,%s,%.1f,%.1f,%.1f,%s,%.1f\n", name, n, ops / n, med, pmax,
            ("pass_ms" in col) ? sprintf("%.1f", pass / n) : "", rss / n / 1024, swap / n / 1024, swapend / 1024, zram, rss / n / 1024 + zram }' "$csv"
    done
  } >"$dir/business.csv"
  column -s, -t "$dir/business.csv" >&2
  ls -l "$dir"
done
