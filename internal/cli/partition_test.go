package cli

import (
	"bytes"
	"os"
	"path/filepath"
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
