package collect

import (
	"testing"

	"mdk/internal/testutil"
)

func requireValgrind(t testing.TB) string {
	t.Helper()
	return testutil.RequireTool(t, "valgrind")
}
