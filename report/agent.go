package report

import "mdk/agent"

// AgentRun is the side-by-side of one mdk agent run (agent.Compare), for the
// report's "Agent run" section: the simulator's prediction on the trace the
// agent observed beside what it measured, per window.
type AgentRun struct {
	Dir     string // the run directory as given
	Setting string // "age:A=2"
	Tracker string // "replay", "live" (idle page tracking), "damon"
	Kernel  string // the kernel release the run was on

	PredPromotions, Promotions []int64 // per window
	PredSaved, Saved           []int64 // per window
	// Totals are rows of (name, predicted, measured), already formatted.
	Totals [][3]string
	// Explain is the comparison's explanation, one sentence a line.
	Explain []string
	// Memory, if set, is the run's memory as the kernel counts it
	// (agent.Comparison.Memory), shown as a table.
	Memory *agent.Memory
}

// jsAgent is the payload of the agent chart.
type jsAgent struct {
	Setting        string   `json:"setting"`
	PredPromotions [][2]any `json:"predPromotions"`
	Promotions     [][2]any `json:"promotions"`
	PredSaved      [][2]any `json:"predSaved"`
	Saved          [][2]any `json:"saved"`
}

func agentPayload(a *AgentRun, maxPoints int) *jsAgent {
	if a == nil {
		return nil
	}
	return &jsAgent{
		Setting:        a.Setting,
		PredPromotions: pairs(ints(a.PredPromotions), maxPoints, true),
		Promotions:     pairs(ints(a.Promotions), maxPoints, true),
		PredSaved:      pairs(ints(a.PredSaved), maxPoints, true),
		Saved:          pairs(ints(a.Saved), maxPoints, true),
	}
}
