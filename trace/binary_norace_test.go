//go:build !race

package trace_test

const binRace = false
