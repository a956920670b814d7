package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mdk/trace"
)

// TestConvertPartitions: convert --partitions writes a partitioned trace
// that converts back byte for byte, keeps its partitions through a plain
// convert, and gives every command the same output as the original.
func TestConvertPartitions(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	orig := genSmall(t, p("a.mdkt"), "--model", "mix")
	if code, _, stderr := runMDK(t, "convert", p("a.mdkt"), p("parts.mdkt"), "--partitions", "7"); code != 0 {
		t.Fatalf("convert --partitions: exit %d: %s", code, stderr)
	}
	parts, _ := os.ReadFile(p("parts.mdkt"))
	if parts[8] != trace.BinaryPartitionedVersion {
		t.Fatalf("convert --partitions wrote version %d, want %d", parts[8], trace.BinaryPartitionedVersion)
	}
	if code, _, stderr := runMDK(t, "convert", p("parts.mdkt"), p("again.mdkt")); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	if again, _ := os.ReadFile(p("again.mdkt")); !bytes.Equal(again, parts) {
		t.Fatal("a plain convert of a partitioned trace changed it")
	}
	if code, _, stderr := runMDK(t, "convert", p("parts.mdkt"), p("back.mdkt"), "--partitions", "0"); code != 0 {
		t.Fatalf("convert --partitions 0: exit %d: %s", code, stderr)
	}
	if back, _ := os.ReadFile(p("back.mdkt")); !bytes.Equal(back, orig) {
		t.Fatal("partitioned and back is not byte-identical")
	}
	for _, args := range [][]string{
		{"mpc", "--csv"},
		{"mpc", "--sample", "10%", "--csv"},
		{"stats"},
		{"sim", "age:A=2"},
	} {
		_, want, _ := runMDK(t, append(args[:1:1], append([]string{p("a.mdkt")}, args[1:]...)...)...)
		code, got, stderr := runMDK(t, append(args[:1:1], append([]string{p("parts.mdkt")}, args[1:]...)...)...)
		if code != 0 || got != want {
			t.Fatalf("mdk %s: exit %d, output differs on the partitioned trace: %s", strings.Join(args, " "), code, stderr)
		}
	}
	_, exact, _ := runMDK(t, "mpc", p("a.mdkt"), "--csv")
	if _, all, _ := runMDK(t, "mpc", p("parts.mdkt"), "--csv", "--sample", "100%"); all != exact {
		t.Fatal("mdk mpc --sample 100% on the partitioned trace differs from the exact curves")
	}
	if code, _, stderr := runMDK(t, "convert", p("a.mdkt"), p("x.txt"), "--partitions", "3"); code != 2 || !strings.Contains(stderr, "binary") {
		t.Fatalf("convert --partitions to text: exit %d, %s", code, stderr)
	}
}

// TestConvertPartitionCuts: --partition-cuts writes version 5 with those
// cuts, which a plain convert keeps and a sample of it replaces by the
// default cuts of its rate; the curves are the original's; bad lists are
// usage errors.
func TestConvertPartitionCuts(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	genSmall(t, p("a.mdkt"), "--model", "mix")
	if code, _, stderr := runMDK(t, "convert", p("a.mdkt"), p("cuts.mdkt"), "--partition-cuts", "0.5%,1%,30%,60%"); code != 0 {
		t.Fatalf("convert --partition-cuts: exit %d: %s", code, stderr)
	}
	partsOf := func(path string) trace.Partitioning {
		t.Helper()
		r, c, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pr, ok := r.(trace.PartitionedReader)
		if !ok {
			t.Fatalf("%s is not partitioned", path)
		}
		return pr.Partitioning()
	}
	want := trace.Partitioning{Count: 5, Seed: 1, Cuts: []uint32{0, 5000, 10000, 300000, 600000, 1000000}}
	if got := partsOf(p("cuts.mdkt")); !got.Equal(want) {
		t.Fatalf("--partition-cuts wrote %+v, want %+v", got, want)
	}
	if code, _, stderr := runMDK(t, "convert", p("cuts.mdkt"), p("again.mdkt")); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	if a, b := readFile(t, p("again.mdkt")), readFile(t, p("cuts.mdkt")); !bytes.Equal(a, b) {
		t.Fatal("a plain convert changed the cuts' trace")
	}
	if code, _, stderr := runMDK(t, "convert", p("cuts.mdkt"), p("s.mdkt"), "--sample", "10%"); code != 0 {
		t.Fatalf("convert --sample of a partitioned trace: exit %d: %s", code, stderr)
	}
	if got := partsOf(p("s.mdkt")); !slices.Equal(got.Cuts, trace.DefaultCuts(5, 100000)) {
		t.Fatalf("a 10%% sample of 5 partitions has cuts %v, want %v", got.Cuts, trace.DefaultCuts(5, 100000))
	}
	for _, args := range [][]string{{"mpc", "--csv"}, {"mpc", "--sample", "1%", "--csv"}, {"mpc", "--sample", "50%", "--csv"}} {
		_, want, _ := runMDK(t, append(args[:1:1], append([]string{p("a.mdkt")}, args[1:]...)...)...)
		code, got, stderr := runMDK(t, append(args[:1:1], append([]string{p("cuts.mdkt")}, args[1:]...)...)...)
		if code != 0 || got != want {
			t.Fatalf("mdk %s: exit %d, output differs on the cut trace: %s", strings.Join(args, " "), code, stderr)
		}
	}
	for _, tc := range [][]string{
		{"--partition-cuts", "10%,5%"},
		{"--partition-cuts", "0%,5%"},
		{"--partition-cuts", "100%"},
		{"--partition-cuts", "5"},
		{"--partition-cuts", "1%,2%", "--partitions", "4"},
	} {
		if code, _, stderr := runMDK(t, append([]string{"convert", p("a.mdkt"), p("bad.mdkt")}, tc...)...); code != 2 || !strings.Contains(stderr, "--partition") {
			t.Errorf("convert %q: exit %d, %s", tc, code, stderr)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
