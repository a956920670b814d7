package result

import (
	"encoding/csv"
	"encoding/json"
	"io"
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
}

// jsonFloat marshals with FormatFloat so JSON and CSV print the same digits.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) { return []byte(FormatFloat(float64(f))), nil }

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
	if perWindow {
		rec.PerWindowPromotions = append([]int64{}, r.Promotions...)
		rec.PerWindowAccessed = append([]int64{}, r.Accessed...)
	}
	return rec
}

// CSVRow returns the record as a row under CSVHeader.
func (rec Record) CSVRow() []string {
	return []string{
		rec.Policy, rec.Params,
		FormatFloat(float64(rec.MaxPR)), FormatFloat(float64(rec.P99PR)), FormatFloat(float64(rec.P98PR)), FormatFloat(float64(rec.MeanPR)),
		strconv.FormatInt(rec.Promotions, 10), strconv.FormatInt(rec.SavedPageWindows, 10), strconv.FormatInt(rec.AlivePageWindows, 10),
		FormatFloat(float64(rec.Savings)), FormatFloat(float64(rec.AvgSavedBytes)),
	}
}

// WriteCSV writes the header and one row per result.
func WriteCSV(w io.Writer, rs []*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
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
