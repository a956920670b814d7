//go:build linux

// Command mdk-workload is the workload of the guest recording tests: see
// package mdk/internal/vmtest/workload.
//
//	mdk-workload schedule SEED PAGES PHASES [BLOCK]
//	mdk-workload share CHILDREN SHARED PRIVATE PERIOD DIR
//	mdk-workload maps FILE FILE-PAGES OFFSET-PAGES MAP-PAGES ANON-PAGES
//	mdk-workload kv SOCKET KEYS VALUE SKEW SETS SHIFT_AT WINDOW WINDOWS [fill]
//
// kv drives a memcached-protocol server at SOCKET (a unix socket path, or
// host:port) with workload.KV (seed 23): with "fill", stores every key
// first; then WINDOWS windows of length WINDOW from now, one CSV line per
// window on standard output (workload.KVHeader).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"mdk/internal/vmtest/workload"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mdk-workload:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	num := func(i int) int {
		if i >= len(args) {
			return -1
		}
		n, err := strconv.Atoi(args[i])
		if err != nil {
			return -1
		}
		return n
	}
	dur := func(i int) time.Duration {
		if i >= len(args) {
			return -1
		}
		d, err := time.ParseDuration(args[i])
		if err != nil {
			return -1
		}
		return d
	}
	switch {
	case len(args) == 4 && args[0] == "schedule" && num(1) >= 0 && num(2) > 0 && num(3) > 0:
		return workload.Run(workload.NewSchedule(uint64(num(1)), num(2), num(3)), os.Stdin, os.Stdout)
	case len(args) == 5 && args[0] == "schedule" && num(1) >= 0 && num(2) > 0 && num(3) > 0 && num(4) > 0:
		return workload.Run(workload.NewBlockSchedule(uint64(num(1)), num(2), num(3), num(4)), os.Stdin, os.Stdout)
	case len(args) == 6 && args[0] == "share" && num(1) >= 0 && num(2) > 0 && num(3) > 0 && dur(4) > 0:
		return workload.RunShare(workload.Share{Children: num(1), Shared: num(2), Private: num(3), Dir: args[5]}, dur(4), os.Stdin, os.Stdout)
	case len(args) == 4 && args[0] == "share-child" && num(1) > 0 && num(2) > 0 && dur(3) > 0:
		return workload.RunShareChild(num(1), num(2), dur(3))
	case len(args) == 6 && args[0] == "maps" && num(2) > 0 && num(3) >= 0 && num(4) > 0 && num(5) > 0:
		return workload.RunMaps(workload.Maps{Path: args[1], FilePages: num(2), Offset: num(3), MapPages: num(4), AnonPages: num(5)}, os.Stdin, os.Stdout)
	case (len(args) == 9 || len(args) == 10 && args[9] == "fill") && args[0] == "kv" && num(2) > 0 && num(3) > 0 && dur(7) > 0 && num(8) > 0:
		return runKV(args, num, dur)
	}
	return fmt.Errorf("usage: mdk-workload schedule SEED PAGES PHASES [BLOCK] | share CHILDREN SHARED PRIVATE PERIOD DIR | maps FILE FILE-PAGES OFFSET-PAGES MAP-PAGES ANON-PAGES | kv SOCKET KEYS VALUE SKEW SETS SHIFT_AT WINDOW WINDOWS [fill]")
}

func runKV(args []string, num func(int) int, dur func(int) time.Duration) error {
	skew, err1 := strconv.ParseFloat(args[4], 64)
	sets, err2 := strconv.ParseFloat(args[5], 64)
	shift, err3 := strconv.Atoi(args[6])
	if err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("kv: SKEW, SETS and SHIFT_AT must be numbers")
	}
	kv := workload.KV{Keys: num(2), ValueSize: num(3), Skew: skew, SetFraction: sets, ShiftAt: shift, Seed: 23}
	conn, err := workload.DialKV(args[1], 30*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if len(args) == 10 {
		if err := kv.Fill(conn); err != nil {
			return err
		}
	}
	fmt.Println(workload.KVHeader)
	return kv.Run(conn, time.Now(), dur(7), num(8), func(w workload.KVWindow) { fmt.Println(w.CSV(dur(7))) })
}
