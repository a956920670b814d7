package verify

import (
	"testing"

	"mdk/trace"
)

// RealTraces is realTraces for the package's external tests (the
// controller table, which runs mdk's CLI): importer/testdata's traces,
// imported as the partition tests import them, with their names.
func RealTraces(t *testing.T) (names []string, traces []*trace.Trace) {
	for _, n := range realTraces(t) {
		names, traces = append(names, n.name), append(traces, n.tr)
	}
	return names, traces
}
