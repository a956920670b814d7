package cli

import (
	"context"
	"os"
	"testing"
)

// With MDK_CLI_AS_MDK=1 the test binary is mdk itself: mdk agent --replay
// starts "os.Executable() workload replay TRACE", which is this binary.
func TestMain(m *testing.M) {
	if os.Getenv("MDK_CLI_AS_MDK") == "1" {
		os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
