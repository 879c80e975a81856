//go:build hugot

package embed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/pipelines"
)

// hugotEncoder runs model.onnx with hugot's pure-Go (GoMLX simplego)
// backend. cairn's tokenizer and pooling are used on both sides, so only
// the encoder differs from the native backend.
type hugotEncoder struct {
	mu       sync.Mutex // hugot pipelines are not documented as safe for concurrent Run
	session  *hugot.Session
	pipeline *pipelines.FeatureExtractionPipeline
	hidden   int
}

func newHugotEncoder(dir string, hidden int) (*hugotEncoder, error) {
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
		return nil, fmt.Errorf("%w: the hugot backend needs model.onnx: %v", ErrUnsupported, err)
	}
	s, err := hugot.NewGoSession()
	if err != nil {
		return nil, fmt.Errorf("embed: hugot session: %w", err)
	}
	p, err := hugot.NewPipeline(s, hugot.FeatureExtractionConfig{
		ModelPath:    dir,
		Name:         "cairn-embed",
		OnnxFilename: "model.onnx",
	})
	if err != nil {
		s.Destroy()
		return nil, fmt.Errorf("%w: hugot pipeline: %v", ErrBadModel, err)
	}
	return &hugotEncoder{session: s, pipeline: p, hidden: hidden}, nil
}

func (h *hugotEncoder) encode(ctx context.Context, seqs [][]int32, pool Pooling) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	batch := backends.NewBatch(len(seqs))
	defer batch.Destroy()
	batch.Input = make([]backends.TokenizedInput, len(seqs))
	for i, s := range seqs {
		ids := make([]uint32, len(s))
		types := make([]uint32, len(s))
		mask := make([]uint32, len(s))
		for j, id := range s {
			ids[j], mask[j] = uint32(id), 1
		}
		batch.Input[i] = backends.TokenizedInput{TokenIDs: ids, TypeIDs: types, AttentionMask: mask, MaxAttentionIndex: len(s) - 1}
		batch.MaxSequenceLength = max(batch.MaxSequenceLength, len(s))
	}
	model := h.pipeline.GetModel()
	if err := backends.CreateInputTensors(batch, model, "GO"); err != nil {
		return nil, fmt.Errorf("embed: hugot inputs: %w", err)
	}
	if err := h.pipeline.Forward(batch); err != nil {
		return nil, fmt.Errorf("embed: hugot forward: %w", err)
	}
	if len(batch.OutputValues) == 0 {
		return nil, fmt.Errorf("%w: hugot returned no output", ErrBadModel)
	}
	hs, ok := batch.OutputValues[0].([][][]float32)
	if !ok {
		return nil, fmt.Errorf("%w: hugot output is %T, want token embeddings", ErrUnsupported, batch.OutputValues[0])
	}
	out := make([][]float32, len(seqs))
	for i, s := range seqs {
		v := make([]float32, h.hidden)
		switch pool {
		case PoolCLS:
			copy(v, hs[i][0])
		default:
			acc := make([]float64, h.hidden)
			for j := range s {
				for d, f := range hs[i][j][:h.hidden] {
					acc[d] += float64(f)
				}
			}
			for d := range v {
				v[d] = float32(acc[d] / float64(len(s)))
			}
		}
		out[i] = v
	}
	return out, nil
}

func (h *hugotEncoder) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == nil {
		return nil
	}
	err := h.session.Destroy()
	h.session = nil
	return err
}
