package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildCairnBinary builds cmd/cairn as the release does (CGO_ENABLED=0) into
// dir and returns the binary's path, for the benchmarks that time or kill
// whole cairn processes. It runs from the repository root.
func BuildCairnBinary(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "cairn")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cairn")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cairn (run from the repository root): %v\n%s", err, out)
	}
	return bin, nil
}
