package agent

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"mdk/internal/outfile"
	"mdk/policy"
	"mdk/trace"
)

// runFiles are the files of a run directory, written to temporary files
// (package outfile) and renamed into place together when the run ends.
type runFiles struct {
	dir     string
	files   []*outfile.File
	tw      trace.Writer
	csv     *csv.Writer
	skipped *csv.Writer
	meta    RunInfo
	// controlled: a policy.Controller decides; measured.csv ends with the
	// setting and switch columns.
	controlled bool
}

// RunInfo is run.json: what compare needs to repeat the setting.
type RunInfo struct {
	// Model is the L-OPP model file of a lopp setting, as given.
	Model    string   `json:"model,omitempty"`
	Setting  string   `json:"setting"`
	Window   string   `json:"window"`
	Tracker  string   `json:"tracker"`
	Targets  []int    `json:"targets"`
	DryRun   bool     `json:"dry_run"`
	MaxPages int      `json:"max_pages"`
	Kernel   string   `json:"kernel"`
	Started  string   `json:"started"`
	Summary  *Summary `json:"summary,omitempty"`
}

// Names of the files in a run directory.
const (
	TraceFile    = "trace.mdkt"
	MeasuredFile = "measured.csv"
	SkippedFile  = "skipped.csv"
	MetaFile     = "run.json"
)

func newRunFiles(opt Options, tracker string, h trace.Header, targets []int) (*runFiles, error) {
	if err := makeRunDir(opt.Dir, opt.Force); err != nil {
		return nil, err
	}
	rf := &runFiles{dir: opt.Dir}
	open := func(name string) (*outfile.File, error) {
		f, err := outfile.Create(filepath.Join(opt.Dir, name))
		if err == nil {
			rf.files = append(rf.files, f)
		}
		return f, err
	}
	tf, err := open(TraceFile)
	if err == nil {
		h.Window = opt.Window
		h.Windows = 0
		var bin *trace.Format
		if bin, err = trace.FormatByName("binary"); err == nil {
			rf.tw, err = bin.NewWriter(tf, h)
		}
	}
	var mf, sf *outfile.File
	if err == nil {
		mf, err = open(MeasuredFile)
	}
	if err == nil {
		sf, err = open(SkippedFile)
	}
	if err != nil {
		rf.abort()
		return nil, err
	}
	rf.csv = csv.NewWriter(mf)
	rf.skipped = csv.NewWriter(sf)
	head := Columns()
	if _, ok := opt.Controller.(*Controlled); ok {
		rf.controlled = true
		head = append(head, "setting", "switch")
	}
	if err := rf.csv.Write(head); err != nil {
		rf.abort()
		return nil, err
	}
	if err := rf.skipped.Write([]string{"window", "page", "cause"}); err != nil {
		rf.abort()
		return nil, err
	}
	rf.meta = RunInfo{
		Setting: policy.String(opt.Setting), Window: opt.Window.String(), Tracker: tracker,
		Model: opt.Model, Targets: targets, DryRun: opt.DryRun, MaxPages: opt.MaxPages,
		Kernel: opt.FS.KernelRelease(), Started: time.Now().UTC().Format(time.RFC3339),
	}
	return rf, nil
}

func (rf *runFiles) write(win *trace.Window, row *Row, skipped []skip) error {
	if err := rf.tw.WriteWindow(win); err != nil {
		return fmt.Errorf("write %s: %w", TraceFile, err)
	}
	rec := row.csvRecord()
	if rf.controlled {
		sw := "0"
		if row.Switched {
			sw = "1"
		}
		rec = append(rec, row.Setting, sw)
	}
	if err := rf.csv.Write(rec); err != nil {
		return fmt.Errorf("write %s: %w", MeasuredFile, err)
	}
	rf.csv.Flush()
	for _, s := range skipped {
		w := row.Window
		if s.cause == CauseBack {
			w--
		}
		if err := rf.skipped.Write([]string{strconv.FormatInt(w, 10), strconv.FormatUint(uint64(s.page), 10), s.cause}); err != nil {
			return fmt.Errorf("write %s: %w", SkippedFile, err)
		}
	}
	rf.skipped.Flush()
	if err := rf.csv.Error(); err != nil {
		return err
	}
	return rf.skipped.Error()
}

func (rf *runFiles) abort() {
	for _, f := range rf.files {
		f.Abort()
	}
}

// finish completes the files and renames them into place; run.json last.
func (rf *runFiles) finish(sum Summary) error {
	err := rf.tw.Close()
	rf.csv.Flush()
	rf.skipped.Flush()
	if err == nil {
		err = rf.csv.Error()
	}
	if err == nil {
		err = rf.skipped.Error()
	}
	if err != nil {
		rf.abort()
		return err
	}
	if err := outfile.CommitAll(rf.files...); err != nil {
		return err
	}
	rf.meta.Summary = &sum
	b, err := json.MarshalIndent(rf.meta, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(filepath.Join(rf.dir, MetaFile), append(b, '\n'))
}
