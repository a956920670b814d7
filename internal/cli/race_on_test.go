//go:build race

package cli

// raceEnabled is set under the race detector, whose shadow memory cannot be
// mapped inside a small address-space limit (ulimit -v).
const raceEnabled = true
