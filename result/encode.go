package result

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
)

// CSVHeader is the header of SPEC section 6.
var CSVHeader = []string{"policy", "params", "max_pr", "p99_pr", "p98_pr", "mean_pr", "promotions", "saved_page_windows", "alive_page_windows", "savings", "avg_saved_bytes"}

// FormatFloat formats x with the fewest digits that round-trip.
func FormatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Record is the machine-readable summary of a Result (SPEC section 6). With
// per-window arrays it is what `mdk sim --json` prints.
type Record struct {
	Policy              string    `json:"policy"`
	Params              string    `json:"params"`
	MaxPR               jsonFloat `json:"max_pr"`
	P99PR               jsonFloat `json:"p99_pr"`
	P98PR               jsonFloat `json:"p98_pr"`
	MeanPR              jsonFloat `json:"mean_pr"`
	Promotions          int64     `json:"promotions"`
	SavedPageWindows    int64     `json:"saved_page_windows"`
	AlivePageWindows    int64     `json:"alive_page_windows"`
	Savings             jsonFloat `json:"savings"`
	AvgSavedBytes       jsonFloat `json:"avg_saved_bytes"`
	PerWindowPromotions []int64   `json:"per_window_promotions,omitempty"`
	PerWindowAccessed   []int64   `json:"per_window_accessed,omitempty"`

	// A sampled run's rate (0.01 = 1%), its number of sub-samples, and
	// each metric's error bound ([Result.Bound]); absent otherwise.
	SampleRate   jsonFloat `json:"sample_rate,omitempty"`
	SampleGroups int       `json:"sample_groups,omitempty"`
	Err          *Errors   `json:"err,omitempty"`
}

// jsonFloat marshals with FormatFloat so JSON and CSV print the same digits.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) {
		return []byte("null"), nil // an error bound that is not printed
	}
	return []byte(FormatFloat(float64(f))), nil
}

// Record returns r's summary; perWindow adds the per-window arrays.
func (r *Result) Record(perWindow bool) Record {
	rec := Record{
		Policy:           r.Policy,
		Params:           r.Params,
		MaxPR:            jsonFloat(r.MaxPR()),
		P99PR:            jsonFloat(r.Percentile(99)),
		P98PR:            jsonFloat(r.Percentile(98)),
		MeanPR:           jsonFloat(r.MeanPR()),
		Promotions:       r.TotalPromotions(),
		SavedPageWindows: r.Saved,
		AlivePageWindows: r.Alive,
		Savings:          jsonFloat(r.Savings()),
		AvgSavedBytes:    jsonFloat(r.AvgSavedBytes()),
	}
	if r.Sampled() {
		rec.SampleRate = jsonFloat(float64(r.SamplePPM) / 1e6)
		rec.SampleGroups = len(r.Groups)
		rec.Err = r.Errors()
	}
	if perWindow {
		rec.PerWindowPromotions = append([]int64{}, r.Promotions...)
		rec.PerWindowAccessed = append([]int64{}, r.Accessed...)
	}
	return rec
}

// CSVRow returns the record as a row under CSVHeader, followed for a
// sampled run by the columns of SampleHeader.
func (rec Record) CSVRow() []string {
	row := []string{
		rec.Policy, rec.Params,
		FormatFloat(float64(rec.MaxPR)), FormatFloat(float64(rec.P99PR)), FormatFloat(float64(rec.P98PR)), FormatFloat(float64(rec.MeanPR)),
		strconv.FormatInt(rec.Promotions, 10), strconv.FormatInt(rec.SavedPageWindows, 10), strconv.FormatInt(rec.AlivePageWindows, 10),
		FormatFloat(float64(rec.Savings)), FormatFloat(float64(rec.AvgSavedBytes)),
	}
	if rec.SampleRate != 0 {
		row = append(row, rec.sampleRow()...)
	}
	return row
}

// WriteCSV writes the header and one row per result; sampled results add
// the columns of SampleHeader.
func WriteCSV(w io.Writer, rs []*Result) error {
	cw := csv.NewWriter(w)
	header := CSVHeader
	if len(rs) > 0 && rs[0].Sampled() {
		header = append(slices.Clone(header), SampleHeader()...)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rs {
		if err := cw.Write(r.Record(false).CSVRow()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the results as a JSON array of records, one per line
// inside the array, with or without per-window arrays.
func WriteJSON(w io.Writer, rs []*Result, perWindow bool) error {
	recs := make([]Record, len(rs))
	for i, r := range rs {
		recs[i] = r.Record(perWindow)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(recs)
}
