package agent

import (
	"fmt"

	"mdk/policy"
	"mdk/trace"
)

// Controlled is the decide stage's [Controller] for a policy.Controller
// (mdk's auto, docs/policies.md "Controllers"): at the end of every window it
// hands the window and its outcome under the model (promotions, accessed,
// saved and alive pages as the simulator counts them on the observed trace:
// a page the policy decided is absent until its next touch, whether the
// kernel took it, refused it, or a guard kept it) to the controller's run,
// which names the setting in force from that scan point on, and decides
// with it by the "due" rule: a resident page is reclaimed when the setting
// has a delay x for its gap and the page has been idle since its touch for
// at least x windows. It is sim.RunControlled's step on the same input, so
// its settings and decisions are the simulator's on the observed trace in
// every window, live or in replay, whatever the kernel refused (docs/agent.md
// "Controllers"). The row gets the setting (and whether it
// switched): measured.csv's setting and switch columns, the JSON log's
// setting and switch, and the Prometheus metrics.
type Controlled struct {
	c   policy.Controller
	run policy.ControlRun
	cur policy.Online
	// Switches lists every switch, in window order.
	Switches []policy.Switch
}

// NewControlled returns the Controller of c; the run starts with the
// agent's ([Controlled.start]).
func NewControlled(c policy.Controller) *Controlled { return &Controlled{c: c} }

// start starts the controller's run over windows of h.
func (c *Controlled) start(h trace.Header) {
	c.run = c.c.NewRun(h)
	c.cur = c.run.Start()
}

// Setting returns a setting that names the controller ("auto:..." in
// run.json); it is never decided with.
func (c *Controlled) Setting() policy.Setting { return named{c.c} }

// Decider asks the controller for window k's setting.
func (c *Controlled) Decider(k int, win *trace.Window, o policy.Outcome, row *Row) (policy.Decider, error) {
	if c.run == nil {
		return nil, fmt.Errorf("agent: controller %s not started", c.c.Policy())
	}
	next, err := c.run.EndWindow(win, o)
	if err != nil {
		return nil, err
	}
	from, to := policy.SpecOf(c.cur), policy.SpecOf(next)
	row.Setting, row.Switched = to, from != to
	if row.Switched {
		c.Switches = append(c.Switches, policy.Switch{Window: k, From: from, To: to})
	}
	c.cur = next
	if _, ok := next.(policy.Capacity); ok {
		return next.NewDecider(nil), nil // a capacity: decide ranks (decide.go)
	}
	return due{next}, nil
}

// due decides with an online setting by the "due" rule.
type due struct{ s policy.Online }

func (d due) Reclaim(st *policy.PageState) bool {
	x, ok := d.s.Due(st)
	return ok && st.Now-st.LastTouch >= x
}

// named is a Setting that only names a controller.
type named struct{ c policy.Controller }

func (n named) Policy() string                    { return n.c.Policy() }
func (n named) Params() string                    { return n.c.Params() }
func (n named) NewDecider([]int64) policy.Decider { return policy.Nothing{} }

var _ Controller = (*Controlled)(nil)
