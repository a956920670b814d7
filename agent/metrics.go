package agent

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"mdk/linux"
	"mdk/policy"
)

// Metrics are the agent's Prometheus metrics: the measured numbers of the
// last window and running totals, and the agent's own cost. Register them
// with [Metrics.Register] and serve the registry (promhttp).
type Metrics struct {
	window    prometheus.Gauge
	pages     *prometheus.CounterVec // decided, out, refused, skipped by what
	refused   *prometheus.CounterVec // by reason
	prom      prometheus.Counter
	saved     prometheus.Gauge
	savedPW   prometheus.Counter
	alive     prometheus.Gauge
	kernelOut prometheus.Gauge
	zram      prometheus.Gauge
	rss, swap prometheus.Gauge
	psi       prometheus.Gauge
	cpu       prometheus.Counter
	lastCPU   prometheus.Gauge
	syscalls  prometheus.Counter
	scanned   prometheus.Counter
	touchRate prometheus.Gauge
	// Under a controller (a setting label "auto:...", "gswap:..."): its switches and
	// the setting in force (a gauge of 1 labelled with it).
	controlled bool
	switches   prometheus.Counter
	current    *prometheus.GaugeVec
}

// NewMetrics returns the agent's metrics, labelled with the setting.
func NewMetrics(setting string) *Metrics {
	l := prometheus.Labels{"setting": setting}
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "mdk", Subsystem: "agent", Name: name, Help: help, ConstLabels: l})
	}
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "mdk", Subsystem: "agent", Name: name, Help: help, ConstLabels: l})
	}
	m := &Metrics{
		window: g("window", "Index of the last completed window."),
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mdk", Subsystem: "agent", Name: "pages_total",
			Help: "Pages by what became of them: decided, reclaimed, out (confirmed), refused, skipped_<cause>.", ConstLabels: l}, []string{"what"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mdk", Subsystem: "agent", Name: "refused_pages_total",
			Help: "Pages still present after MADV_PAGEOUT, by reason.", ConstLabels: l}, []string{"reason"}),
		prom:      c("promotions_total", "Pages the agent put out that were accessed again (real promotions)."),
		saved:     g("saved_pages", "Pages the agent put out that are still out, in the last window."),
		savedPW:   c("saved_page_windows_total", "Saved page-windows so far."),
		alive:     g("alive_pages", "Alive pages of the targets in the last window."),
		kernelOut: g("kernel_out_pages", "Alive pages out that the agent did not put out (kernel reclaim), last window."),
		zram:      g("zram_mem_used_bytes", "Memory used by the zram swap devices (mm_stat mem_used_total)."),
		rss:       g("target_rss_bytes", "The targets' resident memory (VmRSS), last window; -1 when unreadable."),
		swap:      g("target_swap_bytes", "The targets' swapped-out memory (VmSwap), last window; -1 when unreadable."),
		psi:       g("psi_some_avg10", "Memory pressure some avg10 (percent) seen by the agent; -1 when unreadable."),
		cpu:       c("cpu_seconds_total", "CPU time the agent spent in its windows."),
		lastCPU:   g("window_cpu_seconds", "CPU time the agent spent in the last window."),
		syscalls:  c("syscalls_total", "process_madvise calls and pagemap reads."),
		scanned:   c("pages_scanned_total", "Pagemap entries read."),
		touchRate: g("workload_touches_per_second", "The replay workload's touches per second in the last window."),
	}
	if m.controlled = strings.HasPrefix(setting, "auto:") || policy.IsController(setting); m.controlled {
		m.switches = c("switches_total", "Switches of the controller's setting.")
		m.current = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mdk", Subsystem: "agent", Name: "current_setting",
			Help: "The setting the controller has in force (1 for it).", ConstLabels: l}, []string{"current"})
	}
	return m
}

// Register registers every metric with r.
func (m *Metrics) Register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.window, m.pages, m.refused, m.prom, m.saved, m.savedPW, m.alive,
		m.kernelOut, m.zram, m.rss, m.swap, m.psi, m.cpu, m.lastCPU, m.syscalls, m.scanned, m.touchRate} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	if m.controlled {
		for _, c := range []prometheus.Collector{m.switches, m.current} {
			if err := r.Register(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *Metrics) observe(r *Row) {
	m.window.Set(float64(r.Window))
	if m.controlled && r.Setting != "" {
		if r.Switched {
			m.switches.Inc()
		}
		m.current.Reset()
		m.current.WithLabelValues(r.Setting).Set(1)
	}
	for what, n := range map[string]int64{
		"decided": r.Decided, "reclaimed": r.Reclaimed, "out": r.Out, "refused": r.Refused,
		"skipped_dry": r.SkippedDry, "skipped_slo": r.SkippedSLO, "skipped_psi": r.SkippedPSI,
		"skipped_limit": r.SkippedLimit, "skipped_swap": r.SkippedSwap, "skipped_gone": r.SkippedGone,
	} {
		m.pages.WithLabelValues(what).Add(float64(n))
	}
	for k, n := range r.RefusedBy {
		m.refused.WithLabelValues(linux.Refusal(k).String()).Add(float64(n))
	}
	m.prom.Add(float64(r.Promotions))
	m.saved.Set(float64(r.Saved))
	m.savedPW.Add(float64(r.Saved))
	m.alive.Set(float64(r.Alive))
	m.kernelOut.Set(float64(r.KernelOut))
	m.zram.Set(float64(r.ZramMem))
	m.rss.Set(float64(r.RSS))
	m.swap.Set(float64(r.Swap))
	m.psi.Set(r.PSISome)
	m.cpu.Add(float64(r.CPUNS) / 1e9)
	m.lastCPU.Set(float64(r.CPUNS) / 1e9)
	m.syscalls.Add(float64(r.Syscalls))
	m.scanned.Add(float64(r.Scanned))
	m.touchRate.Set(r.TouchesPerSec)
}
