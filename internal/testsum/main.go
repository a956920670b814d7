// Command testsum reads `go test -json` on standard input and prints what
// `go test` prints (a line per package, and the output of failed tests),
// then one line counting the skipped tests by reason, such as a missing
// valgrind, chromium or xgboost:
//
//	go test -json ./... | go run ./internal/testsum
//
// It exits 1 if any test or package failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// reasonLine is a skip message as testing prints it: "    file_test.go:12: why".
var reasonLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)

func main() {
	output := map[string][]string{} // package/test -> its output lines
	reasons := map[string]int{}
	skipped, failed := 0, false
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Println(sc.Text()) // a build error, not JSON
			continue
		}
		key := e.Package + "/" + e.Test
		switch e.Action {
		case "output":
			output[key] = append(output[key], e.Output)
			if e.Test == "" && (strings.HasPrefix(e.Output, "ok  ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?   ")) {
				fmt.Print(e.Output)
			}
		case "skip":
			if e.Test == "" {
				continue
			}
			skipped++
			why := "no reason given"
			for _, l := range output[key] {
				if m := reasonLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
					why = m[1]
				}
			}
			if i := strings.Index(why, ": "); i > 0 {
				why = why[:i]
			}
			reasons[why]++
			delete(output, key)
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Print(strings.Join(output[key], ""))
			}
			delete(output, key)
		case "pass":
			delete(output, key)
		}
	}
	if skipped > 0 {
		var parts []string
		for why, n := range reasons {
			parts = append(parts, fmt.Sprintf("%s (%d)", why, n))
		}
		sort.Strings(parts)
		fmt.Printf("skipped %d tests: %s\n", skipped, strings.Join(parts, "; "))
	}
	if failed {
		os.Exit(1)
	}
}
