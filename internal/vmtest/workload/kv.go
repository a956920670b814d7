package workload

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// KV is a load for a key-value server speaking memcached's text protocol
// (memcached itself; redis does not): Keys keys of ValueSize bytes, read
// with Zipf popularity (exponent Skew over the key ranks, ranks shuffled
// over the keys once by Seed), a SetFraction of the operations writes
// instead of reading, and from window ShiftAt on the popularity moves to
// other keys: rank r is key perm[(r + Keys/2) mod Keys] instead of
// perm[r] (the hot set changes part way). One connection, closed loop: the
// next operation is sent when the previous one has been answered.
type KV struct {
	Keys, ValueSize int
	Skew            float64 // > 1
	SetFraction     float64
	ShiftAt         int // window of the hot-set shift; < 0: none
	Seed            uint64
}

// KVWindow is what the load measured in one window of its clock.
type KVWindow struct {
	Window      int
	Start       time.Time
	Ops, Misses int64
	P50, P99    time.Duration
	Max         time.Duration
}

// KVHeader is the CSV header of [KVWindow] lines.
const KVHeader = "window,start_unix_ns,ops,ops_per_sec,misses,p50_us,p99_us,max_us"

// CSV formats w as a line of [KVHeader] for windows of length d.
func (w KVWindow) CSV(d time.Duration) string {
	us := func(x time.Duration) string { return strconv.FormatFloat(float64(x)/1e3, 'f', 1, 64) }
	return fmt.Sprintf("%d,%d,%d,%.1f,%d,%s,%s,%s", w.Window, w.Start.UnixNano(), w.Ops, float64(w.Ops)/d.Seconds(), w.Misses, us(w.P50), us(w.P99), us(w.Max))
}

// value returns key k's value: ValueSize bytes of 16 letters, so that it
// compresses about as a text payload does (4 bits of entropy a byte).
func (kv KV) value(k int, rng *rand.Rand) []byte {
	b := make([]byte, kv.ValueSize)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(16))
	}
	return b
}

// Fill stores every key once, in key order.
func (kv KV) Fill(conn io.ReadWriter) error {
	rw := bufio.NewReadWriter(bufio.NewReader(conn), bufio.NewWriter(conn))
	rng := rand.New(rand.NewPCG(kv.Seed, 1))
	for k := range kv.Keys {
		if err := set(rw, k, kv.value(k, rng)); err != nil {
			return err
		}
	}
	return nil
}

// Run runs the load for windows windows of length d from epoch (window w
// is [epoch + w*d, epoch + (w+1)*d)) and calls report after each.
func (kv KV) Run(conn io.ReadWriter, epoch time.Time, d time.Duration, windows int, report func(KVWindow)) error {
	if kv.Keys <= 0 || kv.ValueSize <= 0 || kv.Skew <= 1 || d <= 0 {
		return fmt.Errorf("kv: want keys and value size > 0, skew > 1, a window > 0")
	}
	rw := bufio.NewReadWriter(bufio.NewReader(conn), bufio.NewWriter(conn))
	rng := rand.New(rand.NewPCG(kv.Seed, 2))
	perm := rand.New(rand.NewPCG(kv.Seed, 3)).Perm(kv.Keys)
	zipf := rand.NewZipf(rng, kv.Skew, 1, uint64(kv.Keys-1))
	if t := time.Until(epoch); t > 0 {
		time.Sleep(t)
	}
	var lat []time.Duration
	for w := range windows {
		start := epoch.Add(time.Duration(w) * d)
		end := start.Add(d)
		win := KVWindow{Window: w, Start: start}
		lat = lat[:0]
		off := 0
		if kv.ShiftAt >= 0 && w >= kv.ShiftAt {
			off = kv.Keys / 2
		}
		for {
			t0 := time.Now()
			if !t0.Before(end) {
				break
			}
			k := perm[(int(zipf.Uint64())+off)%kv.Keys]
			var err error
			if rng.Float64() < kv.SetFraction {
				err = set(rw, k, kv.value(k, rng))
			} else {
				var hit bool
				hit, err = get(rw, k, kv.ValueSize)
				if !hit {
					win.Misses++
				}
			}
			if err != nil {
				return err
			}
			lat = append(lat, time.Since(t0))
			win.Ops++
		}
		if len(lat) > 0 {
			slices.Sort(lat)
			win.P50 = lat[(len(lat)-1)*50/100]
			win.P99 = lat[(len(lat)-1)*99/100]
			win.Max = lat[len(lat)-1]
		}
		report(win)
	}
	return nil
}

func set(rw *bufio.ReadWriter, k int, v []byte) error {
	fmt.Fprintf(rw, "set k%d 0 0 %d\r\n", k, len(v))
	rw.Write(v)
	rw.WriteString("\r\n")
	if err := rw.Flush(); err != nil {
		return err
	}
	line, err := rw.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "STORED\r\n" {
		return fmt.Errorf("kv: set k%d: %q", k, strings.TrimSpace(line))
	}
	return nil
}

func get(rw *bufio.ReadWriter, k, size int) (bool, error) {
	fmt.Fprintf(rw, "get k%d\r\n", k)
	if err := rw.Flush(); err != nil {
		return false, err
	}
	line, err := rw.ReadString('\n')
	if err != nil {
		return false, err
	}
	if line == "END\r\n" {
		return false, nil
	}
	var key string
	var flags, n int
	if _, err := fmt.Sscanf(line, "VALUE %s %d %d", &key, &flags, &n); err != nil || n != size {
		return false, fmt.Errorf("kv: get k%d: %q", k, strings.TrimSpace(line))
	}
	if _, err := rw.Discard(n + 2); err != nil {
		return false, err
	}
	if line, err = rw.ReadString('\n'); err != nil || line != "END\r\n" {
		return false, fmt.Errorf("kv: get k%d: %q, %v", k, strings.TrimSpace(line), err)
	}
	return true, nil
}

// DialKV connects to a server's unix socket path (or host:port), retrying
// for up to wait while it starts.
func DialKV(addr string, wait time.Duration) (net.Conn, error) {
	network := "unix"
	if strings.Contains(addr, ":") && !strings.HasPrefix(addr, "/") {
		network = "tcp"
	}
	deadline := time.Now().Add(wait)
	for {
		c, err := net.Dial(network, addr)
		if err == nil || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
