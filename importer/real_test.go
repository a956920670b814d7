package importer

// Tests against the real traces in testdata/ (see testdata/README.md). The
// expected numbers are the upstream and independently computed cross-check
// values of /work/shared/data/README.md, not this code's output.

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"mdk/trace"
)

// eachRecord runs fn on every record of testdata/file read by format's
// scanner, with the options o (after the format's defaults are applied).
func eachRecord(t *testing.T, format, file string, o Options, fn func(*Record)) {
	t.Helper()
	f, err := FormatByName(format)
	if err != nil {
		t.Fatal(err)
	}
	if o.WindowRequests == 0 {
		o.WindowRequests = 1
	}
	if err := f.check(&o); err != nil {
		t.Fatal(err)
	}
	in, _, release, err := decompress(bytes.NewReader(readTestdata(t, file)), file, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	sc, err := f.newScanner(in, file, &o)
	if err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		fn(sc.Record())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// cloudPhysicsCSV is the libCacheSim mapping of the README:
// -t "time-col=2, obj-id-col=5, obj-size-col=4", plus the header line.
var cloudPhysicsCSV = CSVOptions{TimeCol: 2, IDCol: 5, SizeCol: 4, Header: true}

func TestCloudPhysicsCSVRecords(t *testing.T) {
	var (
		n, sizeSum uint64
		ids        []uint64
		sizes      []uint64
		distinct         = map[uint64]bool{}
		tmin, tmax int64 = 1 << 62, -1
		decreasing       = 0
		prev       int64 = -1
	)
	eachRecord(t, "csv", "cloudPhysicsIO.csv", Options{CSV: cloudPhysicsCSV}, func(r *Record) {
		n++
		sizeSum += r.Size
		ids = append(ids, r.ID)
		sizes = append(sizes, r.Size)
		distinct[r.ID] = true
		tmin, tmax = min(tmin, r.Time), max(tmax, r.Time)
		if r.Time < prev {
			decreasing++
		}
		prev = r.Time
	})
	// Upstream: PyMimircache README and libCacheSim test/test_traceReader.c.
	if n != 113872 || len(distinct) != 48974 {
		t.Errorf("%d requests, %d distinct blocks; want 113872, 48974", n, len(distinct))
	}
	if want := []uint64{42932745, 42932746, 42932747, 40409911, 31954535, 6238199}; !slices.Equal(ids[:6], want) {
		t.Errorf("first ids %v, want %v", ids[:6], want)
	}
	if last := ids[len(ids)-1]; last != 42936150 {
		t.Errorf("last id %d, want 42936150", last)
	}
	if want := []uint64{512, 512, 512, 6656, 6144, 57344}; !slices.Equal(sizes[:6], want) {
		t.Errorf("first sizes %v, want %v", sizes[:6], want)
	}
	once := 0
	count := map[uint64]int{}
	for _, id := range ids {
		count[id]++
	}
	for _, c := range count {
		if c == 1 {
			once++
		}
	}
	if once != 21049 {
		t.Errorf("%d blocks accessed once, want 21049", once)
	}
	// Computed cross-checks of the README.
	if sizeSum != 4205978112 || tmin != 5633898 || tmax != 5641098 || decreasing != 0 {
		t.Errorf("size sum %d, time %d..%d, %d decreasing; want 4205978112, 5633898..5641098, 0", sizeSum, tmin, tmax, decreasing)
	}
}

// The README's suggested mapping: 4 KiB pages spanned by each request,
// 30 s windows from the first timestamp.
func TestCloudPhysicsCSVBlock(t *testing.T) {
	tr, st := importFile(t, "csv", "cloudPhysicsIO.csv", Options{Map: MapBlock, Window: 30 * time.Second, CSV: cloudPhysicsCSV})
	if st.Records != 113872 || st.Pages != 269210 || len(tr.Pages) != 269210 {
		t.Errorf("%d records, %d pages (%d in trace); want 113872, 269210", st.Records, st.Pages, len(tr.Pages))
	}
	if len(tr.Windows) != 241 || tr.Header.Windows != 241 {
		t.Errorf("%d windows, want 241", len(tr.Windows))
	}
	lo, mean, hi := windowSizes(tr)
	if lo != 1 || hi != 153417 || mean < 3326.5 || mean >= 3327.5 {
		t.Errorf("pages per window min %d mean %.2f max %d; want 1, 3327, 153417", lo, mean, hi)
	}
	// "Window 240 holds only the final second": the last request's pages.
	if n := len(tr.Windows[240].Accessed); n == 0 || n > 17 {
		t.Errorf("window 240 has %d pages, want 1..17 (one second of requests of at most 69,632 bytes each)", n)
	}
	if tr.Header.PageSize != 4096 || tr.Header.Window != 30*time.Second || tr.Header.Source == "" {
		t.Errorf("header %+v", tr.Header)
	}
}

// oracleGeneral holds the same requests as the CSV, except that traceConv
// fixed each object's size at its first request's size (README caveat).
func TestOracleGeneralMatchesCSV(t *testing.T) {
	type req struct {
		time     int64
		id, size uint64
	}
	var csv, bin []req
	eachRecord(t, "csv", "cloudPhysicsIO.csv", Options{CSV: cloudPhysicsCSV}, func(r *Record) { csv = append(csv, req{r.Time, r.ID, r.Size}) })
	eachRecord(t, "oracle-general", "cloudPhysicsIO.oracleGeneral.bin", Options{}, func(r *Record) { bin = append(bin, req{r.Time, r.ID, r.Size}) })
	if len(bin) != 113872 || len(csv) != len(bin) {
		t.Fatalf("%d binary records, %d CSV; want 113872 each", len(bin), len(csv))
	}
	differ := 0
	var byteSum uint64
	first := map[uint64]uint64{}
	for i := range bin {
		c, b := csv[i], bin[i]
		if c.time != b.time || c.id != b.id {
			t.Fatalf("record %d: binary time %d id %d, CSV %d %d", i, b.time, b.id, c.time, c.id)
		}
		if _, ok := first[c.id]; !ok {
			first[c.id] = c.size
		}
		if b.size != first[c.id] {
			t.Errorf("record %d: binary size %d, want the object's first CSV size %d", i, b.size, first[c.id])
		}
		if b.size != c.size {
			differ++
		}
		byteSum += b.size
	}
	if differ != 13671 || byteSum != 4368040448 {
		t.Errorf("%d sizes differ from the CSV, byte sum %d; want 13671, 4368040448", differ, byteSum)
	}

	// Keyed on the id alone, both files give identical windows.
	o := Options{Window: 30 * time.Second, CSV: cloudPhysicsCSV}
	a, _ := importFile(t, "csv", "cloudPhysicsIO.csv", o)
	b, _ := importFile(t, "oracle-general", "cloudPhysicsIO.oracleGeneral.bin", o)
	if !slices.Equal(a.Pages, b.Pages) || len(a.Windows) != len(b.Windows) {
		t.Fatalf("object mapping: %d pages, %d windows from CSV; %d, %d from oracleGeneral", len(a.Pages), len(a.Windows), len(b.Pages), len(b.Windows))
	}
	if len(a.Pages) != 48974 {
		t.Errorf("object mapping: %d pages, want 48974 distinct blocks", len(a.Pages))
	}
	for w := range a.Windows {
		if !slices.Equal(a.Windows[w].Accessed, b.Windows[w].Accessed) {
			t.Fatalf("object mapping: window %d differs", w)
		}
	}
	// Expanded by size, they differ: the binary's sizes are larger.
	o.Map = MapBlock
	_, sb := importFile(t, "oracle-general", "cloudPhysicsIO.oracleGeneral.bin", o)
	if sb.Pages == 269210 || sb.Records != 113872 {
		t.Errorf("block mapping of oracleGeneral: %d pages, the same as the CSV's; the size caveat should show", sb.Pages)
	}
}

func TestAddressGzip(t *testing.T) {
	var n, last int64
	distinct := map[uint64]bool{}
	eachRecord(t, "address", "gzip.trace.gz", Options{}, func(r *Record) {
		n++
		last = r.Time
		distinct[r.ID>>12] = true
	})
	if n != 481044 || last != 602310 || len(distinct) != 39856 {
		t.Errorf("%d references, instruction sum %d, %d pages; want 481044, 602310, 39856", n, last, len(distinct))
	}
	tr, st := importFile(t, "address", "gzip.trace.gz", Options{WindowRequests: 10000})
	// ceil(481044 / 10000) windows.
	if st.Records != 481044 || st.Pages != 39856 || len(tr.Windows) != 49 {
		t.Errorf("%d records, %d pages, %d windows; want 481044, 39856, 49", st.Records, st.Pages, len(tr.Windows))
	}
	tr, _ = importFile(t, "address", "gzip.trace.gz", Options{WindowInstructions: 100000})
	if len(tr.Windows) != 7 { // 602310 / 100000 = 6, windows 0..6
		t.Errorf("%d windows of 100000 instructions, want 7", len(tr.Windows))
	}
}

func TestLBN32XZ(t *testing.T) {
	var n, maxLBN uint64
	distinct := map[uint64]bool{}
	var prev uint64
	runs := 0
	eachRecord(t, "lbn32", "w106.trace.xz", Options{}, func(r *Record) {
		n++
		maxLBN = max(maxLBN, r.ID)
		distinct[r.ID] = true
		if (prev == 641085 && r.ID == 641086) || (prev == 193595 && r.ID == 193596) {
			runs++
		}
		prev = r.ID
	})
	if n != 5292456 || len(distinct) != 275171 || maxLBN != 1197769 {
		t.Errorf("%d references, %d distinct, max %d; want 5292456, 275171, 1197769", n, len(distinct), maxLBN)
	}
	if runs == 0 {
		t.Error("no sequential run 641085,641086 or 193595,193596: byte order wrong?")
	}
	var maxBE uint64
	eachRecord(t, "lbn32", "w106.trace.xz", Options{BigEndian: true}, func(r *Record) { maxBE = max(maxBE, r.ID) })
	if maxBE <= 1197769 {
		t.Errorf("big-endian max %d should be byte-swapped, far above 1197769", maxBE)
	}
}

// damonAreas are the three address areas of damon.data (upstream
// tests/report/expects/report-heats_guide).
var damonAreas = [][2]uint64{
	{94827419009024, 94827452162048},
	{140271510761472, 140271717171200},
	{140734916239360, 140734916927488},
}

func TestDamonJSON(t *testing.T) {
	in, comp, release, err := decompress(bytes.NewReader(readTestdata(t, "damon.data")), "damon.data", "", true)
	if err != nil || comp != CompressZlib {
		t.Fatalf("compression %q, %v; want zlib", comp, err)
	}
	defer release()
	snaps, err := ReadDamonJSON(in, "damon.data")
	if err != nil {
		t.Fatal(err)
	}
	regions, lo, hi, maxAcc := 0, 1<<30, 0, int64(0)
	var wss float64
	for _, s := range snaps {
		regions += len(s.Regions)
		lo, hi = min(lo, len(s.Regions)), max(hi, len(s.Regions))
		for _, r := range s.Regions {
			maxAcc = max(maxAcc, r.NrAccesses)
			if r.NrAccesses > 0 {
				wss += float64(r.End - r.Start)
			}
			inArea := false
			for _, a := range damonAreas {
				inArea = inArea || (r.Start >= a[0] && r.End <= a[1])
			}
			if !inArea {
				t.Errorf("region [%d, %d) outside the three areas", r.Start, r.End)
			}
		}
	}
	if len(snaps) != 543 || regions != 9773 || lo != 7 || hi != 21 || maxAcc != 21 {
		t.Errorf("%d snapshots, %d regions, %d..%d per snapshot, max nr_accesses %d; want 543, 9773, 7..21, 21", len(snaps), regions, lo, hi, maxAcc)
	}
	if mib := wss / float64(len(snaps)) / (1 << 20); mib < 107.7665 || mib >= 107.7675 {
		t.Errorf("mean working set %.4f MiB, want 107.767", mib)
	}
	if first, last := snaps[0].StartNs, snaps[len(snaps)-1].EndNs; (first+5e5)/1e6 != 539809 || (last+5e5)/1e6 != 596607 {
		t.Errorf("covers %d..%d ns, want 539.809 s .. 596.607 s", first, last)
	}

	// One snapshot per window: the regions are page-aligned, so each
	// window's pages are exactly the snapshot's working set.
	tr, st := importFile(t, "damon", "damon.data", Options{WindowRequests: 1})
	_, mean, _ := windowSizes(tr)
	if len(tr.Windows) != 543 || st.Records != 543 {
		t.Errorf("%d windows, %d records; want 543", len(tr.Windows), st.Records)
	}
	if mib := mean * 4096 / (1 << 20); mib < 107.7665 || mib >= 107.7675 {
		t.Errorf("mean pages per window = %.4f MiB, want 107.767", mib)
	}
	for _, p := range tr.Pages {
		if p.Space != 0 {
			t.Fatalf("page %v: one target must give space 0", p)
		}
	}
	// 1 s windows from the first snapshot: 56.8 s give windows 0..56.
	tr, _ = importFile(t, "damon", "damon.data", Options{Window: time.Second})
	if len(tr.Windows) != 57 {
		t.Errorf("%d one-second windows, want 57", len(tr.Windows))
	}
}

func TestDamonPerf(t *testing.T) {
	sc := NewDamonPerfScanner(bytes.NewReader(readTestdata(t, "perf.data.script")), "perf.data.script")
	n, lo, hi, maxAcc := 0, 1<<30, 0, int64(0)
	var wss float64
	var first, last int64
	var minAddr, maxAddr uint64 = 1<<64 - 1, 0
	for sc.Scan() {
		s := sc.Snapshot()
		if n == 0 {
			first = s.StartNs
		}
		last = s.StartNs
		n++
		lo, hi = min(lo, len(s.Regions)), max(hi, len(s.Regions))
		for _, r := range s.Regions {
			maxAcc = max(maxAcc, r.NrAccesses)
			minAddr, maxAddr = min(minAddr, r.Start), max(maxAddr, r.End)
			if r.NrAccesses > 0 {
				wss += float64(r.End - r.Start)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 562 || lo != 8 || hi != 22 || maxAcc != 20 {
		t.Errorf("%d snapshots, %d..%d regions, max nr_accesses %d; want 562, 8..22, 20", n, lo, hi, maxAcc)
	}
	if mib := wss / float64(n) / (1 << 20); mib < 107.965 || mib >= 107.975 {
		t.Errorf("mean working set %.3f MiB, want 107.97", mib)
	}
	if span := float64(last-first) / 1e9; span < 56.355 || span >= 56.365 {
		t.Errorf("span %.3f s, want 56.36", span)
	}
	if minAddr < 94253027950592 || maxAddr > 140731668037632 {
		t.Errorf("addresses %d..%d outside [94253027950592, 140731668037632)", minAddr, maxAddr)
	}
	tr, _ := importFile(t, "damon-perf", "perf.data.script", Options{WindowRequests: 10})
	if len(tr.Windows) != 57 { // ceil(562 / 10)
		t.Errorf("%d windows of 10 snapshots, want 57", len(tr.Windows))
	}
}

// Compressed input is detected by magic, whatever the name.
func TestCompressedCSV(t *testing.T) {
	plain := []byte("1,10,4096\n1,11,4096\n40,10,4096\n")
	o := Options{Window: 30 * time.Second, CSV: CSVOptions{TimeCol: 1, IDCol: 2, SizeCol: 3}}
	want, _, err := importBytes(t, "csv", plain, "plain.csv", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, comp := range []string{CompressGzip, CompressXZ, CompressZstd} {
		got, _, err := importBytes(t, "csv", compress(t, comp, plain), "noext", o)
		if err != nil {
			t.Errorf("%s: %v", comp, err)
			continue
		}
		if !slices.Equal(got.Pages, want.Pages) || len(got.Windows) != 2 || !slices.EqualFunc(accessIDs(got), accessIDs(want), slices.Equal) {
			t.Errorf("%s: got %v %v, want %v %v", comp, got.Pages, accessIDs(got), want.Pages, accessIDs(want))
		}
	}
}

func accessIDs(tr *trace.Trace) [][]uint32 {
	var out [][]uint32
	for _, w := range tr.Windows {
		out = append(out, w.Accessed)
	}
	return out
}
