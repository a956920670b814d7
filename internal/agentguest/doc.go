// Package agentguest holds the live test of mdk agent's controllers, and
// nothing else: lru, senpai, gswap and damos run with mdk agent --pid on a
// real process (mdk workload replay keeping its own clock) in the custom
// guest kernel, whose idle page tracking is the live tracker, and each run
// is held to the simulator on the trace the agent observed (docs/agent.md,
// "Controllers"). Its tests are in agentguest_linux_test.go; it is a package
// of its own so that the agent package's tests stay within go test's
// 10-minute limit.
package agentguest
