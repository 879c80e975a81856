// Command gen writes embed's test models (seeded random BERT weights) into a
// directory: go run ./embed/testdata/gen -out DIR [-model tiny|tiny-cls|minilm].
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/embed/internal/testmodel"
)

func main() {
	out := flag.String("out", "", "output directory (one subdirectory per model)")
	model := flag.String("model", "tiny,tiny-cls,minilm", "comma-separated: tiny, tiny-cls, minilm")
	tok := flag.String("tokenizer", "", "tokenizer.json to copy (default: all-MiniLM-L6-v2's from github.com/daulet/tokenizers in the module cache)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen: -out DIR is required")
		os.Exit(2)
	}
	if *tok == "" {
		b, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		*tok = filepath.Join(strings.TrimSpace(string(b)), "github.com/daulet/tokenizers@v1.24.0/test/data/all-minilm-l6-v2.json")
	}
	specs := map[string]testmodel.Spec{"tiny": testmodel.Tiny(), "tiny-cls": testmodel.TinyCLS(), "minilm": testmodel.MiniLM()}
	for _, m := range strings.Split(*model, ",") {
		s, ok := specs[m]
		if !ok {
			fmt.Fprintf(os.Stderr, "gen: unknown model %q\n", m)
			os.Exit(2)
		}
		if err := s.Write(filepath.Join(*out, m), *tok); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
