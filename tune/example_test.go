package tune_test

import (
	"context"
	"fmt"

	"mdk/gen"
	"mdk/tune"
)

// The phase-change demonstration of docs/tune.md: the working set of the
// phases model moves once, in the middle of the trace, to pages last touched
// long before. Settings tuned on the first half meet the SLO there and break
// it on the second half; OPP, tuned on the second half itself, meets it.
func ExampleRun() {
	cfg := gen.DefaultConfig
	cfg.Model = "phases"
	cfg.Pages = 20000
	cfg.Windows = 120
	cfg.Phases.PhaseWindows = 60
	cfg.Phases.BackgroundProb = 0.002
	slo, err := tune.ParseSLO("max_pr<=2%")
	if err != nil {
		panic(err)
	}
	rep, err := tune.Run(context.Background(), tune.Config{
		SLO:      slo,
		Policies: []string{"age", "vmin"},
		Traces:   []tune.Input{{Name: "phases", Reader: gen.NewReader(cfg)}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("train:", rep.Train.Segments[0])
	fmt.Println("eval: ", rep.Eval.Segments[0])
	for _, c := range rep.Policies {
		fmt.Printf("%s: meets the SLO on train: %v, on eval: %v\n", c.Policy, c.Train.MeetsSLO, c.Eval.MeetsSLO)
	}
	fmt.Printf("opp yardstick %s meets the SLO on eval: %v\n", rep.OPP.Params, rep.OPP.Eval.MeetsSLO)
	// Output:
	// train: phases windows 0..59 (60 of 120)
	// eval:  phases windows 60..119 (60 of 120)
	// age: meets the SLO on train: true, on eval: false
	// vmin: meets the SLO on train: true, on eval: false
	// opp yardstick r=2% meets the SLO on eval: true
}
