//go:build race

package trace_test

// binRace is set under the race detector, which makes sync.Pool drop items
// and so changes allocation counts.
const binRace = true
