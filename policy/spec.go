package policy

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"mdk/trace"
)

// MaxGrid is the largest number of settings one spec may expand to.
const MaxGrid = 100_000

// MaxCount is the largest finite count parameter, in windows.
const MaxCount = math.MaxInt32

// KeyKind is the kind of value a policy key takes.
type KeyKind uint8

const (
	Count KeyKind = iota // a number of windows, or Inf if the key allows it
	Rate                 // a rate in parts per million, 0 to [MaxPPM]
	Float                // a real number within the key's bounds
	Pages                // a number of pages, a share of a size ("50%"), or Inf if the key allows it
)

// String names the kind.
func (k KeyKind) String() string {
	switch k {
	case Count:
		return "count"
	case Rate:
		return "rate"
	case Float:
		return "float"
	case Pages:
		return "pages"
	}
	return fmt.Sprintf("KeyKind(%d)", uint8(k))
}

// Value is the value of one key; the field that matters is the one of the
// key's kind.
type Value struct {
	Windows int     // Count: windows, or Inf
	PPM     int64   // Rate: parts per million
	Float   float64 // Float
	// Pages: a number of pages (Inf for inf), or, with Share, a share
	// of a size in parts per million (held in PPM).
	Pages int64
	Share bool
}

// Key describes one parameter of a policy.
type Key struct {
	Name string
	Kind KeyKind
	Inf  bool    // Count, Pages: "inf" is allowed
	Min  float64 // Float: smallest allowed value
	Max  float64 // Float: largest allowed value
	// Default, if not nil, gives the value of an omitted key for a trace
	// with the given window length. A key without a Default is required.
	Default func(window time.Duration) Value
}

// Def describes one policy for the spec language: its name, its keys and
// how to build a setting from their values.
type Def struct {
	Name string
	Keys []Key // in the order Params prints them
	// New builds a setting from one value per key, in Keys order.
	New func(v []Value) Setting
	// Grid returns the policy's default grid for a window length.
	Grid func(window time.Duration) []Setting
}

// defs is the policy table, in the order help texts list the policies. To
// add a policy, add an entry here (and a grid in grid.go).
var defs = []*Def{
	{
		Name: "age",
		Keys: []Key{{Name: "A", Kind: Count, Inf: true}},
		New:  func(v []Value) Setting { return AGE{A: v[0].Windows} },
		Grid: ageGrid,
	},
	{
		Name: "vmin",
		Keys: []Key{{Name: "T", Kind: Count, Inf: true}},
		New:  func(v []Value) Setting { return VMIN{T: v[0].Windows} },
		Grid: vminGrid,
	},
	{
		Name: "opp",
		Keys: []Key{{Name: "r", Kind: Rate}},
		New:  func(v []Value) Setting { return OPP{PPM: v[0].PPM} },
		Grid: oppGrid,
	},
	{
		Name: "paw",
		Keys: []Key{
			{Name: "P", Kind: Count, Inf: true},
			{Name: "wait", Kind: Count, Default: func(w time.Duration) Value { return Value{Windows: DefaultWait(w)} }},
		},
		New:  func(v []Value) Setting { return PAW{P: v[0].Windows, Wait: v[1].Windows} },
		Grid: pawGrid,
	},
	{
		Name: "pace",
		Keys: []Key{{Name: "P", Kind: Count, Inf: true}, {Name: "A", Kind: Count, Inf: true}},
		New:  func(v []Value) Setting { return PACE{P: v[0].Windows, A: v[1].Windows} },
		Grid: paceGrid,
	},
	{
		// The model is not part of the spec: [AttachModel] sets it.
		Name: "lopp",
		Keys: []Key{
			{Name: "theta", Kind: Float, Min: 0, Max: 1},
			// q, the per-window ration; omitted: none (PPM -1).
			{Name: "q", Kind: Rate, Default: func(time.Duration) Value { return Value{PPM: -1} }},
		},
		New: func(v []Value) Setting {
			if v[1].PPM < 0 {
				return LOPP{Theta: v[0].Float}
			}
			return LOPPRation{Theta: v[0].Float, PPM: v[1].PPM}
		},
		Grid: loppGrid,
	},
	{
		Name: "lru",
		Keys: []Key{{Name: "C", Kind: Pages, Inf: true}},
		New:  func(v []Value) Setting { return LRU{C: v[0].Pages, SharePPM: v[0].PPM, Share: v[0].Share} },
		Grid: lruGrid,
	},
}

// DefaultWait is paw's default wait for a window length: 60 s in windows,
// rounded up.
func DefaultWait(window time.Duration) int {
	if window <= 0 {
		return 0
	}
	return int((time.Minute + window - 1) / window)
}

// Lookup returns the table entry of the policy called name.
func Lookup(name string) (*Def, bool) {
	for _, d := range defs {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// Names returns the names of the known policies, in table order.
func Names() []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	return names
}

func (d *Def) keyNames() string {
	var names []string
	for _, k := range d.Keys {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// SpecError is a mistake in a policy spec. Part is the offending part of
// the spec, prefixed by the policy name where known ("age:A=45s").
type SpecError struct {
	Part string
	Msg  string
}

func (e *SpecError) Error() string { return e.Part + ": " + e.Msg }

func specErrorf(part, format string, args ...any) error {
	return &SpecError{Part: part, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses a policy spec (SPEC section 5) for a trace whose windows last
// window, and returns its settings in grid order. The language:
//
//	NAME                      the policy's default grid ([DefaultGrid])
//	NAME:KEY=VALUE,KEY=VALUE  one setting, or a grid when values are lists
//
// A VALUE is one element or a list of elements separated by "|". An element
// is a scalar or, for count and rate keys, a range START..END (step 1) or
// START..END/STEP, which stands for START, START+STEP, ... up to END.
// Scalars by key kind:
//
//   - count: a plain integer is a number of windows; a Go duration (10m, 90s,
//     1h30m, 500ms) is converted by the trace's window length and must be a
//     whole number of windows; "inf" where the key allows it.
//   - rate: a percentage (2%, 0.5%) or a fraction (0.02), parsed exactly
//     from the decimal digits into parts per million; finer than 1 ppm is
//     an error. A rate range needs an explicit step (0%..5%/0.5%).
//   - float: a decimal number in the key's bounds; no ranges.
//
// Grid order: the policy's keys in table order (the order [Setting.Params]
// prints them), the first key outermost; within a key, the elements as
// written, ranges ascending. A value repeated within one key (1|1, or
// 1m|2 with 30 s windows) is kept once, at its first place. Spaces around
// names, keys and values are ignored. A spec may expand to at most
// [MaxGrid] settings. Errors are [*SpecError]s naming the offending part.
func Parse(spec string, window time.Duration) ([]Setting, error) {
	spec = strings.TrimSpace(spec)
	if window <= 0 {
		return nil, specErrorf(spec, "window length must be positive, got %v", window)
	}
	if spec == "" {
		return nil, specErrorf(`""`, "empty policy spec (want NAME or NAME:KEY=VALUE,...; policies: %s)", strings.Join(Names(), ", "))
	}
	name, rest, hasParams := strings.Cut(spec, ":")
	name = strings.TrimSpace(name)
	def, ok := Lookup(name)
	if !ok {
		return nil, specErrorf(spec, "unknown policy %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if !hasParams {
		return def.Grid(window), nil
	}
	if strings.TrimSpace(rest) == "" {
		return nil, specErrorf(spec, "want KEY=VALUE after %q (%s keys: %s)", name+":", name, def.keyNames())
	}

	// 1. Split the parameters and expand each key's value list.
	values := make([][]Value, len(def.Keys))
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimSpace(part)
		where := name + ":" + part
		if part == "" {
			return nil, specErrorf(spec, "empty parameter (want KEY=VALUE,KEY=VALUE)")
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, specErrorf(where, "want KEY=VALUE, got %q", part)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		ki := -1
		for i := range def.Keys {
			if def.Keys[i].Name == k {
				ki = i
			}
		}
		if ki < 0 {
			return nil, specErrorf(where, "unknown key %q (%s keys: %s)", k, name, def.keyNames())
		}
		if values[ki] != nil {
			return nil, specErrorf(where, "duplicate key %q", k)
		}
		vals, err := parseList(&def.Keys[ki], v, window)
		if err != nil {
			return nil, specErrorf(where, "%s", err)
		}
		values[ki] = vals
	}

	// 2. Fill in defaults; complain about missing keys.
	for i := range def.Keys {
		key := &def.Keys[i]
		if values[i] != nil {
			continue
		}
		if key.Default == nil {
			return nil, specErrorf(spec, "missing key %q (%s keys: %s)", key.Name, name, def.keyNames())
		}
		values[i] = []Value{key.Default(window)}
	}

	// 3. Check the grid's size, then build it, first key outermost.
	n := uint64(1)
	var counts []string
	overflow := false
	for _, vals := range values {
		hi, lo := bits.Mul64(n, uint64(len(vals)))
		overflow = overflow || hi != 0
		n = lo
		counts = append(counts, strconv.Itoa(len(vals)))
	}
	if overflow || n > MaxGrid {
		total := strconv.FormatUint(n, 10)
		if overflow {
			total = "too many"
		}
		if len(counts) > 1 {
			total = strings.Join(counts, " x ") + " = " + total
		}
		return nil, specErrorf(spec, "grid too large: %s settings (limit %d)", total, MaxGrid)
	}
	settings := make([]Setting, 0, n)
	cur := make([]Value, len(values))
	var build func(i int)
	build = func(i int) {
		if i == len(values) {
			settings = append(settings, def.New(cur))
			return
		}
		for _, v := range values[i] {
			cur[i] = v
			build(i + 1)
		}
	}
	build(0)
	return settings, nil
}

// parseList parses one key's value: elements separated by "|". Repeated
// values are kept once.
func parseList(key *Key, s string, window time.Duration) ([]Value, error) {
	if s == "" {
		return nil, fmt.Errorf("empty value for %s", key.Name)
	}
	var out []Value
	seen := map[Value]bool{}
	total := 0
	for _, elem := range strings.Split(s, "|") {
		elem = strings.TrimSpace(elem)
		if elem == "" {
			return nil, fmt.Errorf("empty element in list %q", s)
		}
		vals, err := parseElem(key, elem, window, MaxGrid+1-total)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		total += len(vals)
	}
	return out, nil
}

// parseElem parses one list element: a scalar or a range. A range with more
// than limit values is an error.
func parseElem(key *Key, elem string, window time.Duration, limit int) ([]Value, error) {
	lo, rest, isRange := strings.Cut(elem, "..")
	if !isRange {
		v, err := parseScalar(key, elem, window)
		if err != nil {
			return nil, err
		}
		return []Value{v}, nil
	}
	if key.Kind == Float {
		return nil, fmt.Errorf("bad range %q: %s takes no ranges, use a list such as 0.1|0.2|0.3", elem, key.Name)
	}
	if key.Kind == Pages {
		return parsePagesRange(key, elem, lo, rest, limit)
	}
	hi, step, hasStep := strings.Cut(rest, "/")
	var start, end, inc int64
	var err error
	if start, err = parseRangeBound(key, strings.TrimSpace(lo), window); err != nil {
		return nil, fmt.Errorf("bad range %q: %w", elem, err)
	}
	if end, err = parseRangeBound(key, strings.TrimSpace(hi), window); err != nil {
		return nil, fmt.Errorf("bad range %q: %w", elem, err)
	}
	switch {
	case hasStep:
		if strings.HasPrefix(strings.TrimSpace(step), "-") {
			return nil, fmt.Errorf("bad range %q: step must be positive", elem)
		}
		if inc, err = parseRangeBound(key, strings.TrimSpace(step), window); err != nil {
			return nil, fmt.Errorf("bad range %q: %w", elem, err)
		}
	case key.Kind == Rate:
		return nil, fmt.Errorf("bad range %q: a rate range needs a step, as in 0%%..5%%/0.5%%", elem)
	default:
		inc = 1
	}
	n, err := rangeLen(elem, start, end, inc, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Value, 0, n)
	for x := start; x <= end; x += inc {
		if key.Kind == Rate {
			out = append(out, Value{PPM: x})
		} else {
			out = append(out, Value{Windows: int(x)})
		}
	}
	return out, nil
}

// rangeLen checks a range start..end/inc and returns its number of values,
// at most limit.
func rangeLen(elem string, start, end, inc int64, limit int) (int64, error) {
	if end < start {
		return 0, fmt.Errorf("bad range %q: end is less than start", elem)
	}
	if inc <= 0 {
		return 0, fmt.Errorf("bad range %q: step must be positive", elem)
	}
	n := (end-start)/inc + 1
	if n > int64(limit) {
		return 0, fmt.Errorf("bad range %q: %d values, more than the grid limit of %d", elem, n, MaxGrid)
	}
	return n, nil
}

func parseRangeBound(key *Key, s string, window time.Duration) (int64, error) {
	if s == "inf" {
		return 0, fmt.Errorf("inf cannot be a range bound")
	}
	v, err := parseScalar(key, s, window)
	if err != nil {
		return 0, err
	}
	if key.Kind == Rate {
		return v.PPM, nil
	}
	return int64(v.Windows), nil
}

// parseScalar parses one value of key's kind, and checks its range.
func parseScalar(key *Key, s string, window time.Duration) (Value, error) {
	switch key.Kind {
	case Count:
		n, err := parseCount(key, s, window)
		return Value{Windows: n}, err
	case Rate:
		ppm, err := parsePPM(s)
		if err != nil {
			return Value{}, err
		}
		if ppm < 0 || ppm > MaxPPM {
			return Value{}, fmt.Errorf("%s must be between 0 and 100%%, got %s", key.Name, s)
		}
		return Value{PPM: ppm}, nil
	case Pages:
		return parsePages(key, s)
	case Float:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
			return Value{}, fmt.Errorf("bad value %q for %s: want a decimal number", s, key.Name)
		}
		if f < key.Min || f > key.Max {
			return Value{}, fmt.Errorf("%s must be between %s and %s, got %s", key.Name,
				strconv.FormatFloat(key.Min, 'g', -1, 64), strconv.FormatFloat(key.Max, 'g', -1, 64), s)
		}
		return Value{Float: f}, nil
	}
	panic("policy: unknown key kind " + key.Kind.String())
}

// parseCount parses a count of windows: an integer, a duration that is a
// whole number of windows, or "inf" if the key allows it.
func parseCount(key *Key, s string, window time.Duration) (int, error) {
	if s == "inf" {
		if !key.Inf {
			return 0, fmt.Errorf("%s cannot be inf", key.Name)
		}
		return Inf, nil
	}
	if isDigits(strings.TrimLeft(s, "+-")) && strings.IndexAny(s[1:], "+-") < 0 {
		// A plain integer: a number of windows.
		n, err := strconv.ParseInt(s, 10, 64)
		switch {
		case s[0] == '-' && (err != nil || n < 0):
			return 0, fmt.Errorf("%s must be >= 0, got %s", key.Name, s)
		case err != nil || n > MaxCount:
			return 0, fmt.Errorf("%s must be at most %d windows, got %s", key.Name, MaxCount, s)
		}
		return int(n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		inf := ""
		if key.Inf {
			inf = ", or inf"
		}
		return 0, fmt.Errorf("bad value %q for %s: want a number of windows or a duration such as 90s or 10m%s", s, key.Name, inf)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s must be >= 0, got %s", key.Name, s)
	}
	if d%window != 0 {
		return 0, fmt.Errorf("%s is not a whole number of %s windows", s, trace.FormatDuration(window))
	}
	if d/window > MaxCount {
		return 0, fmt.Errorf("%s must be at most %d windows, got %s (%d windows)", key.Name, MaxCount, s, d/window)
	}
	return int(d / window), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseRate parses a rate written as a percentage ("2%", "0.5%") or a
// fraction ("0.02") into parts per million, exactly: the decimal digits are
// never converted through floating point. The rate must be between 0 and
// 100% and a whole number of ppm.
func ParseRate(s string) (ppm int64, err error) {
	s = strings.TrimSpace(s)
	ppm, err = parsePPM(s)
	if err != nil {
		return 0, err
	}
	if ppm < 0 || ppm > MaxPPM {
		return 0, fmt.Errorf("rate %s is out of range: want 0 to 100%%", s)
	}
	return ppm, nil
}

// ParseRates parses a comma-separated list of rates ("1%,2%,0.05") with
// [ParseRate].
func ParseRates(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("empty rate in list %q", s)
		}
		ppm, err := ParseRate(part)
		if err != nil {
			return nil, err
		}
		out = append(out, ppm)
	}
	return out, nil
}

// parsePPM parses [-]DIGITS[.DIGITS][%] or [-].DIGITS[%] exactly. It does
// not check the bounds, but keeps the result small enough not to overflow
// (anything over 100% comes back as MaxPPM+1, or its negative).
func parsePPM(s string) (int64, error) {
	bad := func() (int64, error) {
		return 0, fmt.Errorf("bad rate %q: want a percentage such as 2%% or 0.5%%, or a fraction such as 0.02", s)
	}
	num, pct := strings.CutSuffix(s, "%")
	num, neg := strings.CutPrefix(num, "-")
	whole, frac, hasDot := strings.Cut(num, ".")
	if whole == "" && frac == "" || whole != "" && !isDigits(whole) || hasDot && !isDigits(frac) {
		return bad()
	}
	// digits: decimal places that fit in 1 ppm.
	digits, unit := 6, int64(1_000_000)
	if pct {
		digits, unit = 4, 10_000
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > digits {
		return 0, fmt.Errorf("rate %s is more precise than 1 ppm (0.0001%%)", s)
	}
	w := int64(0)
	if whole != "" {
		v, err := strconv.ParseInt(strings.TrimLeft(whole, "0")+"0", 10, 64)
		if err != nil || v/10 > 100 {
			if neg {
				return -(MaxPPM + 1), nil
			}
			return MaxPPM + 1, nil
		}
		w = v / 10
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", digits-len(frac)), 10, 64)
	}
	if neg {
		return -(w*unit + f), nil
	}
	return w*unit + f, nil
}

// parsePages parses one value of a Pages key: a number of pages, a share
// written as a percentage ("50%", exact to 1 ppm), or "inf" where allowed.
func parsePages(key *Key, s string) (Value, error) {
	switch {
	case s == "inf" && key.Inf:
		return Value{Pages: Inf}, nil
	case strings.HasSuffix(s, "%"):
		ppm, err := parsePPM(s)
		if err != nil {
			return Value{}, err
		}
		if ppm < 0 || ppm > MaxPPM {
			return Value{}, fmt.Errorf("%s must be a share between 0 and 100%%, got %s", key.Name, s)
		}
		return Value{PPM: ppm, Share: true}, nil
	case isDigits(s):
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n >= Inf {
			return Value{}, fmt.Errorf("%s must be at most %d pages, got %s", key.Name, Inf-1, s)
		}
		return Value{Pages: n}, nil
	}
	inf := ""
	if key.Inf {
		inf = ", or inf"
	}
	return Value{}, fmt.Errorf("bad value %q for %s: want a number of pages or a share such as 50%%%s", s, key.Name, inf)
}

// parsePagesRange parses a range of a Pages key: of page counts (step 1
// unless given) or of shares (a step required: 0%..100%/10%).
func parsePagesRange(key *Key, elem, lo, rest string, limit int) ([]Value, error) {
	hi, step, hasStep := strings.Cut(rest, "/")
	var b [3]Value
	for i, x := range []string{lo, hi, step} {
		if i == 2 && !hasStep {
			b[2] = Value{Pages: 1, Share: b[0].Share}
			if b[0].Share {
				return nil, fmt.Errorf("bad range %q: a share range needs a step, as in 0%%..100%%/10%%", elem)
			}
			break
		}
		x = strings.TrimSpace(x)
		if x == "inf" {
			return nil, fmt.Errorf("bad range %q: inf cannot be a range bound", elem)
		}
		v, err := parsePages(key, x)
		if err != nil {
			return nil, fmt.Errorf("bad range %q: %w", elem, err)
		}
		b[i] = v
	}
	if b[0].Share != b[1].Share || b[0].Share != b[2].Share {
		return nil, fmt.Errorf("bad range %q: give the bounds and the step all as pages or all as shares", elem)
	}
	at := func(v Value) int64 {
		if v.Share {
			return v.PPM
		}
		return v.Pages
	}
	start, end, inc := at(b[0]), at(b[1]), at(b[2])
	n, err := rangeLen(elem, start, end, inc, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Value, 0, n)
	for x := start; x <= end; x += inc {
		if b[0].Share {
			out = append(out, Value{PPM: x, Share: true})
		} else {
			out = append(out, Value{Pages: x})
		}
	}
	return out, nil
}
