package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
)

// TestControlledRowAndMetrics checks where a controller's setting goes
// besides measured.csv: the JSON line's last keys (absent with a fixed
// setting) and the Prometheus metrics (switches_total, current_setting,
// registered only for a controller).
func TestControlledRowAndMetrics(t *testing.T) {
	fixed := Row{Window: 3}
	b, _ := fixed.MarshalJSON()
	if strings.Contains(string(b), "setting") {
		t.Errorf("a fixed setting's JSON line has a setting key: %s", b)
	}
	r := Row{Window: 4, Setting: "age:A=2", Switched: true}
	b, err := r.MarshalJSON()
	var back struct {
		Window   int64  `json:"window"`
		Setting  string `json:"setting"`
		Switched bool   `json:"switch"`
	}
	if err != nil || json.Unmarshal(b, &back) != nil || back.Setting != "age:A=2" || !back.Switched || back.Window != 4 {
		t.Fatalf("JSON line %s: %+v", b, back)
	}

	m := NewMetrics("auto:age,slo=max_pr<=2%,history=60,every=5,margin=25%")
	reg := prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	m.observe(&r)
	m.observe(&Row{Window: 5, Setting: "age:A=2"})
	if got := promtest.ToFloat64(m.switches); got != 1 {
		t.Errorf("switches_total %v, want 1", got)
	}
	if got := promtest.ToFloat64(m.current.WithLabelValues("age:A=2")); got != 1 {
		t.Errorf("current_setting{current=age:A=2} %v, want 1", got)
	}
	if n := promtest.CollectAndCount(m.current); n != 1 {
		t.Errorf("%d current_setting series, want 1", n)
	}
	plain := NewMetrics("age:A=2")
	reg = prometheus.NewRegistry()
	if err := plain.Register(reg); err != nil {
		t.Fatal(err)
	}
	if n, _ := promtest.GatherAndCount(reg, "mdk_agent_switches_total"); n != 0 {
		t.Errorf("a fixed setting registers %d switches_total series", n)
	}
}
