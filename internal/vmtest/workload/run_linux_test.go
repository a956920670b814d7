package workload

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// TestRun drives the workload through a pipe: the ready line and one reply
// per command.
func TestRun(t *testing.T) {
	s := NewSchedule(1, 64, 3)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(s, inR, outW); outW.Close() }()
	rd := bufio.NewReader(outR)
	line, _ := rd.ReadString('\n')
	if f := strings.Fields(line); len(f) != 3 || f[0] != "ready" || f[2] != "64" {
		t.Fatalf("ready line %q", line)
	}
	for _, cmd := range []string{"phase 1", "touch 1 20", "phase 2 -1", "touch 2"} {
		fmt.Fprintln(inW, cmd)
		want := "done " + strings.Fields(cmd)[1] + "\n"
		if got, _ := rd.ReadString('\n'); got != want {
			t.Fatalf("%s: %q, want %q", cmd, got, want)
		}
	}
	fmt.Fprintln(inW, "exit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunMaps runs the mappings workload in this process and finds its two
// mappings in /proc/self/maps at the addresses of its ready line, with
// their sizes, permissions, offsets and the file's path.
func TestRunMaps(t *testing.T) {
	m := Maps{Path: t.TempDir() + "/maps.dat", FilePages: 12, Offset: 3, MapPages: 5, AnonPages: 7}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- RunMaps(m, inR, outW); outW.Close() }()
	line, _ := bufio.NewReader(outR).ReadString('\n')
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ready" {
		t.Fatalf("ready line %q", line)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	var fileStart, anonStart uint64
	fmt.Sscanf(f[1], "%x", &fileStart)
	fmt.Sscanf(f[2], "%x", &anonStart)
	want := []string{
		fmt.Sprintf("%x-%x r--s %08x ", fileStart, fileStart+5*4096, 3*4096),
		fmt.Sprintf("%x-%x rw-p 00000000 00:00 0 ", anonStart, anonStart+7*4096),
	}
	for i, w := range want {
		found := ""
		for _, l := range strings.Split(string(maps), "\n") {
			if strings.HasPrefix(l+" ", w) {
				found = l
			}
		}
		if found == "" || i == 0 && !strings.HasSuffix(found, m.Path) {
			t.Errorf("no mapping %q in /proc/self/maps:\n%s", w, maps)
		}
	}
	fmt.Fprintln(inW, "exit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Path); !os.IsNotExist(err) {
		t.Errorf("%s is left behind (%v)", m.Path, err)
	}
}
