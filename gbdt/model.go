package gbdt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"mdk/internal/outfile"
)

// Model is a trained classifier. It is immutable and safe for concurrent use.
//
// Layout: every tree's nodes live in one flat slice; roots holds the index of
// each tree's root. A split node sends x to left when x[feature] <= value,
// else to left+1; a leaf has feature -1 and its value is added to the margin.
type Model struct {
	nfeat int
	base  float64 // initial margin
	cfg   Config
	cuts  [][]float64
	roots []int32
	nodes []node
}

type node struct {
	feature int32   // split feature, or -1 for a leaf
	left    int32   // left child; the right child is left+1
	value   float64 // split threshold, or leaf value
}

// NumFeatures returns the number of features a row must have.
func (m *Model) NumFeatures() int { return m.nfeat }

// Trees returns the number of trees.
func (m *Model) Trees() int { return len(m.roots) }

// Config returns the configuration the model was trained with (Workers 0).
func (m *Model) Config() Config { return m.cfg }

// Cuts returns the bin edges of feature f found on the training data. The
// slice must not be modified.
func (m *Model) Cuts(f int) []float64 { return m.cuts[f] }

// Margin returns the model's log-odds for the row x, which must hold at
// least NumFeatures values.
func (m *Model) Margin(x []float64) float64 {
	x = x[:m.nfeat]
	s := m.base
	nodes := m.nodes
	for _, r := range m.roots {
		k := r
		for {
			nd := &nodes[k]
			if nd.feature < 0 {
				s += nd.value
				break
			}
			if x[nd.feature] <= nd.value {
				k = nd.left
			} else {
				k = nd.left + 1
			}
		}
	}
	return s
}

// Score returns the probability in [0, 1] that row x is positive: the
// sigmoid of [Model.Margin]. A NaN feature goes right at every split.
func (m *Model) Score(x []float64) float64 { return sigmoid(m.Margin(x)) }

// The model file, version 1. Trees keep node indices local to the tree.
type fileModel struct {
	Format      string      `json:"format"`
	Version     int         `json:"version"`
	NumFeatures int         `json:"num_features"`
	BaseMargin  float64     `json:"base_margin"`
	Config      Config      `json:"config"`
	Cuts        [][]float64 `json:"cuts"`
	Trees       []fileTree  `json:"trees"`
}

type fileTree struct {
	Feature []int32   `json:"feature"` // -1 for a leaf
	Left    []int32   `json:"left"`    // left child; the right one is left+1; 0 for a leaf
	Value   []float64 `json:"value"`   // threshold (x <= value goes left), or leaf value
}

// FileFormat and FileVersion identify a model file.
const (
	FileFormat  = "mdk-gbdt"
	FileVersion = 1
)

// ErrModel is wrapped by every error about a malformed model file.
var ErrModel = errors.New("gbdt: bad model")

// WriteJSON writes the model as JSON. The same model always gives the same
// bytes.
func (m *Model) WriteJSON(w io.Writer) error {
	f := fileModel{
		Format: FileFormat, Version: FileVersion, NumFeatures: m.nfeat,
		BaseMargin: m.base, Config: m.cfg, Cuts: slices.Clone(m.cuts),
	}
	for i, r := range m.roots {
		end := int32(len(m.nodes))
		if i+1 < len(m.roots) {
			end = m.roots[i+1]
		}
		var t fileTree
		for _, nd := range m.nodes[r:end] {
			left := int32(0)
			if nd.feature >= 0 {
				left = nd.left - r
			}
			t.Feature = append(t.Feature, nd.feature)
			t.Left = append(t.Left, left)
			t.Value = append(t.Value, nd.value)
		}
		f.Trees = append(f.Trees, t)
	}
	for i := range f.Cuts {
		if f.Cuts[i] == nil {
			f.Cuts[i] = []float64{}
		}
	}
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("gbdt: encode model: %w", err)
	}
	data = append(data, '\n')
	_, err = w.Write(data)
	return err
}

// SaveFile writes the model to the file path.
func (m *Model) SaveFile(path string) error {
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		return err
	}
	if err := outfile.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	return nil
}

// LoadFile reads a model file written by [Model.SaveFile]. Errors name the
// file.
func LoadFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	defer f.Close()
	m, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ReadJSON reads a model written by [Model.WriteJSON] and checks it
// completely: an error wrapping [ErrModel] says what is wrong and where.
func ReadJSON(r io.Reader) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	var f fileModel
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			// Offset counts the bytes read, the bad one included.
			return nil, fmt.Errorf("%w: byte %d: %v", ErrModel, max(se.Offset-1, 0), se)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%w: byte %d: field %s: got JSON %s, want %v", ErrModel, te.Offset, te.Field, te.Value, te.Type)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("%w: truncated JSON (%d bytes): %v", ErrModel, len(data), io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("%w: %v", ErrModel, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: byte %d: data after the model", ErrModel, dec.InputOffset())
	}
	return fromFile(&f)
}

func fromFile(f *fileModel) (*Model, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrModel, fmt.Sprintf(format, a...))
	}
	if f.Format != FileFormat {
		return nil, bad("format %q: want %q", f.Format, FileFormat)
	}
	if f.Version != FileVersion {
		return nil, bad("version %d: this mdk reads version %d", f.Version, FileVersion)
	}
	if f.NumFeatures < 1 {
		return nil, bad("num_features %d: want >= 1", f.NumFeatures)
	}
	if len(f.Cuts) != f.NumFeatures {
		return nil, bad("cuts has %d features: want num_features = %d", len(f.Cuts), f.NumFeatures)
	}
	if err := f.Config.Validate(); err != nil {
		return nil, bad("config: %v", err)
	}
	for i, c := range f.Cuts {
		for k := 1; k < len(c); k++ {
			if !(c[k-1] < c[k]) {
				return nil, bad("cuts[%d] not increasing at %d", i, k)
			}
		}
		if len(c) > f.Config.MaxBins-1 {
			return nil, bad("cuts[%d] has %d edges: want at most max_bins-1 = %d", i, len(c), f.Config.MaxBins-1)
		}
	}
	if len(f.Trees) == 0 {
		return nil, bad("no trees")
	}
	m := &Model{nfeat: f.NumFeatures, base: f.BaseMargin, cfg: f.Config, cuts: f.Cuts}
	for ti, t := range f.Trees {
		n := len(t.Feature)
		if n == 0 || len(t.Left) != n || len(t.Value) != n {
			return nil, bad("tree %d: feature, left and value have lengths %d, %d, %d: want equal and > 0", ti, n, len(t.Left), len(t.Value))
		}
		root := int32(len(m.nodes))
		for k := 0; k < n; k++ {
			feat, left := t.Feature[k], t.Left[k]
			switch {
			case feat == -1:
				m.nodes = append(m.nodes, node{feature: -1, value: t.Value[k]})
			case feat < -1 || int(feat) >= f.NumFeatures:
				return nil, bad("tree %d node %d: feature %d: want -1 (leaf) or 0..%d", ti, k, feat, f.NumFeatures-1)
			case int(left) <= k || int(left)+1 >= n:
				// Children after their parent: no cycles, every walk ends.
				return nil, bad("tree %d node %d: left child %d: want %d..%d", ti, k, left, k+1, n-2)
			default:
				m.nodes = append(m.nodes, node{feature: feat, left: root + left, value: t.Value[k]})
			}
		}
		m.roots = append(m.roots, root)
	}
	if math.IsNaN(m.base) {
		return nil, bad("base_margin is NaN")
	}
	return m, nil
}
