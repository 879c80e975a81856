//go:build !hugot

package embed

import (
	"context"
	"fmt"
)

// hugotEncoder stands in for the hugot backend in builds without the
// hugot tag, which keep hugot and its ONNX graph runtime out of the binary.
type hugotEncoder struct{}

func newHugotEncoder(string, int) (*hugotEncoder, error) {
	return nil, fmt.Errorf("%w: this build has no hugot backend (build with -tags hugot)", ErrUnsupported)
}

func (*hugotEncoder) encode(context.Context, [][]int32, Pooling) ([][]float32, error) {
	return nil, ErrUnsupported
}

func (*hugotEncoder) close() error { return nil }
