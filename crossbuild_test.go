package cairn_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/racedetector"
)

// TestCrossBuild: the packages of the binary with platform-specific files
// (the amd64 assembly kernels of embed and index with their pure-Go
// fallbacks, the vecstore file lock) build for windows/arm64, which takes
// every fallback at once. `make dist` builds the whole binary for every
// release platform; this is the cheap guard in the ordinary test run
// (left out of the race run).
func TestCrossBuild(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("cross build: left to the run without -race")
	}
	env := append(os.Environ(), "GOOS=windows", "GOARCH=arm64", "CGO_ENABLED=0")
	list := exec.Command("go", "list", "-deps", "./cmd/cairn")
	list.Env = env
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		for _, layer := range []string{"/embed", "/index", "/vecstore"} {
			if strings.HasPrefix(p, module+layer) {
				pkgs = append(pkgs, p)
			}
		}
	}
	if len(pkgs) < 3 {
		t.Fatalf("packages to cross-build: %v", pkgs)
	}
	build := exec.Command("go", append([]string{"build"}, pkgs...)...)
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows GOARCH=arm64 go build %v: %v\n%s", pkgs, err, out)
	}
}
