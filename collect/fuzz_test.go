package collect

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"testing"
)

var lineRef = regexp.MustCompile(`^x:\d+: `)

// FuzzLackeyReader: no panic; every error names the line; every window
// obeys the Reader contract (checked by windowSets).
func FuzzLackeyReader(f *testing.F) {
	seed, err := os.ReadFile("testdata/fixtures/lackey_true.log")
	if err != nil {
		f.Fatal(err)
	}
	// The first lines of a real log keep each run short.
	lines := bytes.SplitAfter(seed, []byte("\n"))
	f.Add(bytes.Join(lines[:60], nil), int64(10))
	f.Add([]byte("I  1000,4\n S ffc,8\n M 1ffe,4\n==1== x\n--1-- y\n**1** z\n"), int64(1))
	f.Add([]byte("I  ffffffffffffffff,1\n L fffffffffffffff0,16\n"), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, n int64) {
		if n < 1 || n > 1<<20 {
			n = 1
		}
		_, err := windowSets(t, NewLackeyReader(bytes.NewReader(data), "x", n))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || !lineRef.MatchString(err.Error()) {
				t.Fatalf("error without a line: %v", err)
			}
		}
	})
}
