package workload

import (
	"bufio"
	"fmt"
	"io"
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
