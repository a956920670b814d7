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

// fillBatch is how many sets Fill sends before it reads their answers: a
// round trip per batch, not per key (in emulation a round trip is
// milliseconds).
const fillBatch = 64

// Fill stores every key once, in key order, fillBatch sets at a time.
func (kv KV) Fill(conn io.ReadWriter) error {
	rw := bufio.NewReadWriter(bufio.NewReader(conn), bufio.NewWriter(conn))
	rng := rand.New(rand.NewPCG(kv.Seed, 1))
	for lo := 0; lo < kv.Keys; lo += fillBatch {
		hi := min(lo+fillBatch, kv.Keys)
		for k := lo; k < hi; k++ {
			writeSet(rw, k, kv.value(k, rng))
		}
		if err := rw.Flush(); err != nil {
			return err
		}
		for k := lo; k < hi; k++ {
			if err := readStored(rw, k); err != nil {
				return err
			}
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
	keys := newZipfPicker(kv.Seed, kv.Keys, kv.Skew, kv.ShiftAt)
	rng := keys.rng
	if t := time.Until(epoch); t > 0 {
		time.Sleep(t)
	}
	var lat []time.Duration
	for w := range windows {
		start := epoch.Add(time.Duration(w) * d)
		end := start.Add(d)
		win := KVWindow{Window: w, Start: start}
		var err error
		win.Ops, win.P50, win.P99, win.Max, err = closedLoop(end, &lat, func() error {
			k := keys.pick(w)
			if rng.Float64() < kv.SetFraction {
				return set(rw, k, kv.value(k, rng))
			}
			hit, err := get(rw, k, kv.ValueSize)
			if !hit {
				win.Misses++
			}
			return err
		})
		if err != nil {
			return err
		}
		report(win)
	}
	return nil
}

// zipfPicker draws ids 0..n-1 with Zipf popularity (exponent skew over
// ranks shuffled over the ids once by seed); from window shiftAt on (if
// >= 0) rank r is id perm[(r + n/2) mod n] instead of perm[r].
type zipfPicker struct {
	rng        *rand.Rand
	perm       []int
	zipf       *rand.Zipf
	n, shiftAt int
}

func newZipfPicker(seed uint64, n int, skew float64, shiftAt int) *zipfPicker {
	rng := rand.New(rand.NewPCG(seed, 2))
	return &zipfPicker{rng: rng, perm: rand.New(rand.NewPCG(seed, 3)).Perm(n), zipf: rand.NewZipf(rng, skew, 1, uint64(n-1)), n: n, shiftAt: shiftAt}
}

// pick draws the id of an operation in window w.
func (z *zipfPicker) pick(w int) int {
	off := 0
	if z.shiftAt >= 0 && w >= z.shiftAt {
		off = z.n / 2
	}
	return z.perm[(int(z.zipf.Uint64())+off)%z.n]
}

// closedLoop runs op again and again until end, the next when the
// previous has returned, and returns how many ran, their latencies' 50th
// and 99th percentiles (index (n-1)*q of the sorted latencies) and
// maximum (zeros if none ran), or op's first error. lat is scratch space.
func closedLoop(end time.Time, lat *[]time.Duration, op func() error) (n int64, p50, p99, max time.Duration, err error) {
	l := (*lat)[:0]
	defer func() { *lat = l }()
	for {
		t0 := time.Now()
		if !t0.Before(end) {
			break
		}
		if err := op(); err != nil {
			return 0, 0, 0, 0, err
		}
		l = append(l, time.Since(t0))
	}
	if len(l) == 0 {
		return 0, 0, 0, 0, nil
	}
	slices.Sort(l)
	return int64(len(l)), l[(len(l)-1)*50/100], l[(len(l)-1)*99/100], l[len(l)-1], nil
}

func set(rw *bufio.ReadWriter, k int, v []byte) error {
	writeSet(rw, k, v)
	if err := rw.Flush(); err != nil {
		return err
	}
	return readStored(rw, k)
}

// writeSet buffers the set of key k to v.
func writeSet(rw *bufio.ReadWriter, k int, v []byte) {
	fmt.Fprintf(rw, "set k%d 0 0 %d\r\n", k, len(v))
	rw.Write(v)
	rw.WriteString("\r\n")
}

// readStored reads the answer to a set of key k.
func readStored(rw *bufio.ReadWriter, k int) error {
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
