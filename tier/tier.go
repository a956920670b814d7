package tier

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"mdk/internal/outfile"
)

// Tier is the cost model of one far tier.
type Tier struct {
	// Name is the tier's kind or a label: "zram", "zswap", "ssd", "cxl".
	Name string `json:"name"`
	// Source says where the figures come from: a measurement (the
	// command, kernel and compressor) or the published figures they are
	// taken from.
	Source string `json:"source"`
	// Measured is true when the figures were measured (mdk calibrate),
	// false when they are assumed from published figures.
	Measured bool `json:"measured"`
	// PageSizeBytes is the page size the figures are for (4096).
	PageSizeBytes int64 `json:"page_size_bytes"`
	// PromotionNs is the latency of one promotion: a touch of a reclaimed
	// page, from the access to the data being usable (nanoseconds). The
	// model charges its mean per promotion.
	PromotionNs Latency `json:"promotion_ns"`
	// ResidentTouchNs is the latency of the same touch to a resident page
	// (measured tiers only), for comparison.
	ResidentTouchNs *Latency `json:"resident_touch_ns,omitempty"`
	// DemotionNsPerPage is the CPU time to move one page to the tier
	// (compression, or the write's submission), per page (nanoseconds).
	DemotionNsPerPage float64 `json:"demotion_ns_per_page"`
	// StoredBytesPerPage is the local memory the tier uses for each page it
	// holds, all overheads included (zram: mm_stat's mem_used_total per
	// stored page), for the content named by Content. 0 for a tier that
	// keeps nothing in local memory.
	StoredBytesPerPage float64 `json:"stored_bytes_per_page"`
	// Content names the page content StoredBytesPerPage is for
	// ("text", "pid 1234"); Contents lists every content measured.
	Content  string    `json:"content,omitempty"`
	Contents []Content `json:"contents,omitempty"`
}

// Latency is a latency distribution in nanoseconds. The model charges Mean.
// For a measured tier (mdk calibrate), P50, P99 and Max are of the wall
// time of each touch and MeanWall is their mean, while Mean is the thread's
// CPU time over the touches divided by their number: on a busy machine a
// few touches are descheduled for milliseconds (resident touches too),
// which inflates MeanWall but is not the tier's cost.
type Latency struct {
	Samples  int64   `json:"samples,omitempty"` // 0 for assumed figures
	Mean     float64 `json:"mean"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	Max      float64 `json:"max"`
	MeanWall float64 `json:"mean_wall,omitempty"`
}

// Content is the tier's memory use for one kind of page content.
type Content struct {
	Name string `json:"name"`
	// Pages stored; OrigBytes their size; ComprBytes the compressed size
	// and MemUsedBytes the memory the tier used for them (zram mm_stat's
	// orig_data_size, compr_data_size, mem_used_total).
	Pages        int64 `json:"pages"`
	OrigBytes    int64 `json:"orig_bytes"`
	ComprBytes   int64 `json:"compr_bytes"`
	MemUsedBytes int64 `json:"mem_used_bytes"`
	// SamePages are pages the tier stored without compressing them
	// (zram's same_pages: pages filled with one repeated word).
	SamePages int64 `json:"same_pages"`
	// PromotionNs is the swap-in latency measured on this content, and
	// DemotionNsPerPage the swap-out time per page.
	PromotionNs       *Latency `json:"promotion_ns,omitempty"`
	DemotionNsPerPage float64  `json:"demotion_ns_per_page,omitempty"`
}

// StoredBytesPerPage returns the tier memory per page for this content.
func (c Content) StoredBytesPerPage() float64 {
	if c.Pages == 0 {
		return 0
	}
	return float64(c.MemUsedBytes) / float64(c.Pages)
}

// StoredFraction returns the tier's local memory per page held as a
// fraction of the page (0.25: a page costs a quarter page in the tier).
func (t *Tier) StoredFraction() float64 {
	return t.StoredBytesPerPage / float64(t.PageSizeBytes)
}

// MaxLatencyNs bounds every latency of a tier file: a minute. A page touch
// or a page's demotion slower than that is not a tier's latency but a
// damaged file (or one in other units).
const MaxLatencyNs = 60e9

// Validate checks that every figure is usable: a name, a positive page
// size, finite non-negative latencies of at most [MaxLatencyNs] and sizes,
// a positive mean promotion latency (a tier file without promotion_ns
// would charge nothing per promotion), and a stored size per page of at
// most the page (a tier that stores a page in more than a page frees
// nothing).
func (t *Tier) Validate() error {
	var errs []error
	bad := func(field string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if t.Name == "" {
		bad("name", "missing")
	}
	if t.PageSizeBytes <= 0 {
		bad("page_size_bytes", "want a positive page size, got %d", t.PageSizeBytes)
	}
	nonNeg := func(field string, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			bad(field, "want a finite number >= 0, got %v", x)
		}
	}
	ns := func(field string, x float64) {
		nonNeg(field, x)
		if x > MaxLatencyNs {
			bad(field, "%v ns is more than a minute: not a latency in nanoseconds", x)
		}
	}
	lat := func(field string, l Latency) {
		ns(field+".mean", l.Mean)
		ns(field+".p50", l.P50)
		ns(field+".p99", l.P99)
		ns(field+".max", l.Max)
		ns(field+".mean_wall", l.MeanWall)
		if l.Samples < 0 {
			bad(field+".samples", "want >= 0, got %d", l.Samples)
		}
	}
	lat("promotion_ns", t.PromotionNs)
	if t.ResidentTouchNs != nil {
		lat("resident_touch_ns", *t.ResidentTouchNs)
	}
	ns("demotion_ns_per_page", t.DemotionNsPerPage)
	nonNeg("stored_bytes_per_page", t.StoredBytesPerPage)
	switch {
	case t.PageSizeBytes > 0 && t.StoredBytesPerPage > float64(4*t.PageSizeBytes):
		bad("stored_bytes_per_page", "%v is more than 4 pages of %d bytes", t.StoredBytesPerPage, t.PageSizeBytes)
	case t.PageSizeBytes > 0 && t.StoredBytesPerPage > float64(t.PageSizeBytes):
		bad("stored_bytes_per_page", "%v is more than the page of %d bytes: reclaiming a page would cost memory", t.StoredBytesPerPage, t.PageSizeBytes)
	}
	if t.PromotionNs.Mean == 0 {
		bad("promotion_ns.mean", "missing or 0: the model charges it per promotion (nanoseconds, e.g. 10533 for zram)")
	}
	return errors.Join(errs...)
}

// Parse reads a tier file (the JSON [Tier.Write] writes). name is used in
// errors; every error names it, and a syntax error its byte offset.
func Parse(r io.Reader, name string) (*Tier, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: tier file larger than %d bytes", name, maxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Tier
	if err := dec.Decode(&t); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s: byte %d: %v", name, se.Offset, err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s: byte %d: field %s: want %v, got JSON %s", name, te.Offset, te.Field, te.Type, te.Value)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%s: empty tier file, want a JSON object", name)
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: byte %d: data after the tier's JSON object", name, dec.InputOffset())
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &t, nil
}

// maxFileBytes caps a tier file: a few kilobytes in practice.
const maxFileBytes = 1 << 20

// Load returns the built-in tier called s, or else the tier file at path s.
func Load(s string) (*Tier, error) {
	if t, ok := Builtin(s); ok {
		return t, nil
	}
	f, err := os.Open(s)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(s, `/\.`) {
			return nil, fmt.Errorf("tier %q: neither a built-in tier (%s) nor a file", s, strings.Join(BuiltinNames(), ", "))
		}
		return nil, fmt.Errorf("tier: %w", err)
	}
	defer f.Close()
	return Parse(f, s)
}

// Write writes t as indented JSON.
func (t *Tier) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// WriteFile writes t to path through a temporary file in the same
// directory, renamed on success.
func (t *Tier) WriteFile(path string) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("tier: %w", err)
	}
	var b bytes.Buffer
	if err := t.Write(&b); err != nil {
		return err
	}
	return outfile.WriteFile(path, b.Bytes())
}

// BuiltinNames lists the built-in tiers.
func BuiltinNames() []string {
	var names []string
	for _, t := range builtins {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// Builtin returns a copy of the built-in tier called name.
func Builtin(name string) (*Tier, bool) {
	for _, t := range builtins {
		if t.Name == name {
			c := t
			return &c, true
		}
	}
	return nil, false
}
