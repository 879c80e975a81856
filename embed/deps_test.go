package embed_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/racedetector"
)

// TestBuildDeps holds what each build links: embed never the built-in
// weights (embed/builtin) and hugot only with -tags hugot; the cairn binary
// the built-in model but not hugot, unless tagged otherwise.
func TestBuildDeps(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("runs go list: left to the run without -race")
	}
	const (
		mod     = "github.com/cairn-dev/cairn"
		hugot   = "github.com/knights-analytics/hugot"
		builtin = mod + "/embed/builtin"
	)
	deps := func(pkg string, tags ...string) []string {
		args := []string{"list", "-deps"}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		out, err := exec.Command("go", append(args, pkg)...).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	cases := []struct {
		pkg       string
		tags      []string
		with, not []string
	}{
		{mod + "/embed", nil, nil, []string{builtin, hugot}},
		{mod + "/embed", []string{"hugot"}, []string{hugot}, []string{builtin}},
		{mod + "/cmd/cairn", nil, []string{builtin}, []string{hugot}},
		{mod + "/cmd/cairn", []string{"nobuiltinmodel"}, nil, []string{builtin, hugot}},
	}
	for _, c := range cases {
		d := deps(c.pkg, c.tags...)
		for _, w := range c.with {
			if !slices.Contains(d, w) {
				t.Errorf("%s (tags %v) does not link %s", c.pkg, c.tags, w)
			}
		}
		for _, n := range c.not {
			if slices.Contains(d, n) {
				t.Errorf("%s (tags %v) links %s", c.pkg, c.tags, n)
			}
		}
	}
}
