package workload

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeMemcached serves set and get of memcached's text protocol on conn
// and counts the gets of each key.
func fakeMemcached(conn net.Conn, gets map[string]int) {
	defer conn.Close()
	rd := bufio.NewReader(conn)
	store := map[string][]byte{}
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 5 && f[0] == "set":
			var n int
			fmt.Sscan(f[4], &n)
			b := make([]byte, n+2)
			if _, err := io.ReadFull(rd, b); err != nil {
				return
			}
			store[f[1]] = b[:n]
			conn.Write([]byte("STORED\r\n"))
		case len(f) == 2 && f[0] == "get":
			gets[f[1]]++
			v, ok := store[f[1]]
			if !ok {
				conn.Write([]byte("END\r\n"))
				continue
			}
			conn.Write([]byte(fmt.Sprintf("VALUE %s 0 %d\r\n%s\r\nEND\r\n", f[1], len(v), v)))
		default:
			conn.Write([]byte("ERROR\r\n"))
		}
	}
}

// TestKV fills a fake server (every key stored, in batches) and runs the load for 4 short windows with
// the hot set moving at window 2: every get hits, there are operations,
// every window's percentiles are in order, and the most read keys before
// and after the shift differ. (A window may have no operation on a loaded
// machine: the previous one's last answer may come after its end.)
func TestKV(t *testing.T) {
	kv := KV{Keys: 200, ValueSize: 100, Skew: 1.3, SetFraction: 0.1, ShiftAt: 2, Seed: 7}
	// A real socket: Fill sends a batch of sets before reading their
	// answers, which needs the socket's buffers (net.Pipe has none).
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "kv.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	gets := map[string]int{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if b, err := ln.Accept(); err == nil {
			fakeMemcached(b, gets)
		}
	}()
	a, err := DialKV(ln.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Fill(a); err != nil {
		t.Fatal(err)
	}
	var wins []KVWindow
	before := map[string]int{}
	err = kv.Run(a, time.Now(), 200*time.Millisecond, 4, func(w KVWindow) {
		wins = append(wins, w)
		if w.Window == 1 {
			for k, n := range gets {
				before[k] = n
			}
		}
	})
	a.Close()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if len(wins) != 4 {
		t.Fatalf("%d windows", len(wins))
	}
	var ops int64
	for _, w := range wins {
		ops += w.Ops
		if w.Misses != 0 || w.P50 > w.P99 || w.P99 > w.Max {
			t.Errorf("window %+v", w)
		}
		if !strings.HasPrefix(w.CSV(200*time.Millisecond), fmt.Sprint(w.Window, ",")) {
			t.Errorf("csv %q", w.CSV(200*time.Millisecond))
		}
	}
	if ops == 0 {
		t.Fatal("no operation")
	}
	after := map[string]int{}
	for k, n := range gets {
		if d := n - before[k]; d > 0 {
			after[k] = d
		}
	}
	if topKey(before) == topKey(after) {
		t.Errorf("the most read key is %s before and after the shift", topKey(before))
	}
	if len(before) == 0 || len(after) == 0 {
		t.Fatal("no get before or after the shift")
	}
}

// TestKVRejects: a load without keys or with a Zipf exponent of 1 or less
// is an error, not a hang.
func TestKVRejects(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, kv := range []KV{{Keys: 0, ValueSize: 1, Skew: 1.2}, {Keys: 10, ValueSize: 1, Skew: 1}} {
		if err := kv.Run(a, time.Now(), time.Millisecond, 1, func(KVWindow) {}); err == nil {
			t.Errorf("%+v: no error", kv)
		}
	}
}

// topKey returns the key of m with the largest count (the least key of a
// tie).
func topKey(m map[string]int) string {
	best, n := "", -1
	for k, c := range m {
		if c > n || c == n && k < best {
			best, n = k, c
		}
	}
	return best
}
