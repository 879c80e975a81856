package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/embed"
)

// Embedding models live in DATA_DIR/models/NAME/, each a sentence-transformers
// directory plus cairn-model.json (the SHA-256 of every file, written by
// import and checked by list --verify).

const manifestName = "cairn-model.json"

type modelManifest struct {
	Name     string            `json:"name"`
	ModelID  string            `json:"model_id"`
	Dim      int               `json:"dim"`
	Source   string            `json:"source"`
	Imported time.Time         `json:"imported"`
	Files    map[string]string `json:"files"` // relative path -> hex SHA-256
}

func modelCommand() *command {
	return &command{
		name:    "model",
		summary: "manage embedding models (import, list, pull)",
		usage:   "import DIR [--name NAME] | list [--verify] | pull NAME",
		examples: []string{
			`cairn model import ~/Downloads/all-MiniLM-L6-v2`,
			`cairn model list --json`,
			`cairn model pull sentence-transformers/all-MiniLM-L6-v2`,
		},
		run: runModel,
	}
}

func runModel(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	name := fs.String("name", "", "import: name of the model in the data dir (default: the directory's name)")
	verify := fs.Bool("verify", false, "list: re-hash every file against its manifest")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef(c.name, "missing subcommand: import, list or pull")
	}
	dataDir, err := e.resolveDataDir()
	if err != nil {
		return err
	}
	models := filepath.Join(dataDir, "models")
	switch pos[0] {
	case "import":
		if len(pos) != 2 {
			return usagef(c.name, "import takes one model directory")
		}
		n := *name
		if n == "" {
			n = filepath.Base(filepath.Clean(pos[1]))
		}
		m, err := importModel(ctx, pos[1], models, n, pos[1])
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(m)
		}
		fmt.Fprintf(e.stdout, "imported %s (dim %d, %s) into %s\n", m.Name, m.Dim, m.ModelID, filepath.Join(models, m.Name))
		return nil
	case "list":
		if len(pos) != 1 {
			return usagef(c.name, "list takes no arguments")
		}
		return listModels(e, models, *verify)
	case "pull":
		if len(pos) != 2 {
			return usagef(c.name, "pull takes one Hugging Face model name, e.g. sentence-transformers/all-MiniLM-L6-v2")
		}
		return pullModel(ctx, e, pos[1], models)
	}
	return usagef(c.name, "unknown subcommand %q (import, list or pull)", pos[0])
}

// validModelName keeps model names to one path element.
func validModelName(n string) error {
	if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) || strings.HasPrefix(n, ".") {
		return usagef("model", "invalid model name %q", n)
	}
	return nil
}

// importModel verifies the model in src (it must open and embed), copies it
// into models/name through a temporary directory and a rename, re-hashes
// the copy and writes its manifest.
func importModel(ctx context.Context, src, models, name, source string) (*modelManifest, error) {
	if err := validModelName(name); err != nil {
		return nil, err
	}
	dst := filepath.Join(models, name)
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("model %q already exists in %s", name, models)
	}
	man, err := checkModel(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("model %s does not load: %w", src, err)
	}
	if err := os.MkdirAll(models, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(models, ".import-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	man.Files = map[string]string{}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || !modelSubdir(rel)) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		}
		if !modelFile(rel) {
			return nil
		}
		sum, err := copyFile(p, filepath.Join(tmp, rel))
		man.Files[filepath.ToSlash(rel)] = sum
		return err
	})
	if err != nil {
		return nil, err
	}
	// Verify the copy: same hashes, and it opens with the same model id.
	for rel, want := range man.Files {
		got, err := hashFile(filepath.Join(tmp, rel))
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, fmt.Errorf("copy of %s is corrupt (sha256 %s, want %s)", rel, got, want)
		}
	}
	again, err := checkModel(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("imported copy does not load: %w", err)
	}
	if again.ModelID != man.ModelID {
		return nil, fmt.Errorf("imported copy has model id %s, source %s", again.ModelID, man.ModelID)
	}
	man.Name, man.Source, man.Imported = name, source, time.Now().UTC()
	b, _ := json.MarshalIndent(man, "", "  ")
	if err := writeFileSync(filepath.Join(tmp, manifestName), append(b, '\n')); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return nil, err
	}
	syncDir(models)
	return man, nil
}

func modelSubdir(rel string) bool {
	return strings.HasSuffix(filepath.ToSlash(rel), "_Pooling") || strings.HasSuffix(rel, "_Normalize")
}

func modelFile(rel string) bool {
	switch filepath.Ext(rel) {
	case ".json", ".safetensors", ".onnx", ".txt":
		return filepath.Base(rel) != manifestName
	}
	return false
}

// checkModel opens the model and embeds one sentence.
func checkModel(ctx context.Context, dir string) (*modelManifest, error) {
	m, err := embed.Open(ctx, dir, embed.Options{CacheSize: -1})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	v, err := m.Embed(ctx, []string{"cairn checks that this model embeds a sentence."})
	if err != nil {
		return nil, err
	}
	if len(v) != 1 || len(v[0]) != m.Dim() {
		return nil, errors.New("the model returned a vector of the wrong size")
	}
	for _, f := range v[0] {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, errors.New("the model returned a non-finite vector")
		}
	}
	return &modelManifest{ModelID: m.ModelID(), Dim: m.Dim()}, nil
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		out.Close()
		return "", err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), out.Close()
}

func writeFileSync(p string, b []byte) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func readManifest(dir string) (*modelManifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	var m modelManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", manifestName, err)
	}
	return &m, nil
}

func listModels(e *env, models string, verify bool) error {
	ents, err := os.ReadDir(models)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	type row struct {
		modelManifest
		Dir    string `json:"dir"`
		Status string `json:"status"`
	}
	var rows []row
	for _, d := range ents {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		dir := filepath.Join(models, d.Name())
		r := row{Dir: dir, Status: "ok"}
		m, err := readManifest(dir)
		if err != nil {
			r.Name, r.Status = d.Name(), "no manifest (not imported with cairn model import)"
			rows = append(rows, r)
			continue
		}
		r.modelManifest = *m
		if verify {
			for rel, want := range m.Files {
				if got, err := hashFile(filepath.Join(dir, filepath.FromSlash(rel))); err != nil || got != want {
					r.Status = "corrupt: " + rel
					break
				}
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	if e.json {
		for _, r := range rows {
			if err := e.printJSON(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintf(e.stdout, "no models in %s (add one with 'cairn model import DIR')\n", models)
		return nil
	}
	for _, r := range rows {
		fmt.Fprintf(e.stdout, "%-28s dim %-5d %s  %s\n", r.Name, r.Dim, r.ModelID, r.Status)
	}
	return nil
}

// pullFiles are fetched from a Hugging Face repository; optional ones may be missing.
var pullFiles = []struct {
	name     string
	optional bool
}{
	{"config.json", false}, {"tokenizer.json", false}, {"model.safetensors", false},
	{"modules.json", true}, {"1_Pooling/config.json", true}, {"sentence_bert_config.json", true},
	{"config_sentence_transformers.json", true},
}

// pullModel downloads NAME from huggingface.co into a temporary directory
// and imports it. Without a network it fails within a few seconds.
func pullModel(ctx context.Context, e *env, name string, models string) error {
	if strings.Count(name, "/") != 1 || strings.Contains(name, "..") {
		return usagef("model", "pull takes a Hugging Face name like sentence-transformers/all-MiniLM-L6-v2, got %q", name)
	}
	base := e.getenv("CAIRN_HF_ENDPOINT")
	if base == "" {
		base = "https://huggingface.co"
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
	}}
	tmp, err := os.MkdirTemp("", "cairn-pull-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range pullFiles {
		url := base + "/" + name + "/resolve/main/" + f.name
		err := download(ctx, client, url, filepath.Join(tmp, filepath.FromSlash(f.name)), e.stderr)
		var nf notFound
		switch {
		case errors.As(err, &nf) && f.optional:
			continue
		case err != nil && errors.As(err, &nf):
			return fmt.Errorf("model %s has no %s on %s: cairn needs a sentence-transformers BERT model with safetensors weights", name, f.name, base)
		case err != nil:
			return fmt.Errorf("cannot download %s from %s: %w\nno network? download the model elsewhere, copy its directory here and run 'cairn model import DIR'", name, base, err)
		}
	}
	m, err := importModel(ctx, tmp, models, filepath.Base(name), base+"/"+name)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(m)
	}
	fmt.Fprintf(e.stdout, "pulled %s (dim %d, %s) into %s\n", m.Name, m.Dim, m.ModelID, filepath.Join(models, m.Name))
	return nil
}

type notFound struct{ url string }

func (n notFound) Error() string { return n.url + ": not found" }

func download(ctx context.Context, client *http.Client, url, dst string, progress io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return notFound{url}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	pw := &progressWriter{w: progress, name: filepath.Base(dst), total: resp.ContentLength}
	if _, err := io.Copy(out, io.TeeReader(resp.Body, pw)); err != nil {
		return err
	}
	pw.done()
	return out.Sync()
}

// progressWriter draws a one-line progress bar on w.
type progressWriter struct {
	w     io.Writer
	name  string
	total int64
	n     int64
	last  time.Time
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if time.Since(p.last) > 200*time.Millisecond {
		p.last = time.Now()
		p.draw()
	}
	return len(b), nil
}

func (p *progressWriter) draw() {
	if p.total > 0 {
		const width = 30
		done := int(float64(width) * float64(p.n) / float64(p.total))
		fmt.Fprintf(p.w, "\r%-34s [%s%s] %5.1f%% of %.1f MB", p.name, strings.Repeat("=", done), strings.Repeat(" ", width-done), 100*float64(p.n)/float64(p.total), float64(p.total)/1e6)
	} else {
		fmt.Fprintf(p.w, "\r%-34s %.1f MB", p.name, float64(p.n)/1e6)
	}
}

func (p *progressWriter) done() {
	p.draw()
	fmt.Fprintln(p.w)
}

// resolveModel finds the embedding model directory: --model DIR, then
// $CAIRN_MODEL (a directory, or a name under DATA_DIR/models), then the
// only model (or all-MiniLM-L6-v2) under DATA_DIR/models. --model
// builtinModelRef names the model built into the binary (openModel opens
// either).
func (e *env) resolveModel(flagDir string) (string, error) {
	if flagDir != "" {
		return flagDir, nil
	}
	dataDir, derr := e.resolveDataDir()
	models := filepath.Join(dataDir, "models")
	if v := e.getenv("CAIRN_MODEL"); v != "" {
		if st, err := os.Stat(v); err == nil && st.IsDir() {
			return v, nil
		}
		if derr == nil && validModelName(v) == nil {
			if st, err := os.Stat(filepath.Join(models, v)); err == nil && st.IsDir() {
				return filepath.Join(models, v), nil
			}
		}
		return "", fmt.Errorf("%w: CAIRN_MODEL=%q is neither a directory nor a model in %s", embed.ErrNoModel, v, models)
	}
	if derr == nil {
		var found []string
		if ents, err := os.ReadDir(models); err == nil {
			for _, d := range ents {
				if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
					found = append(found, d.Name())
				}
			}
		}
		switch {
		case len(found) == 1:
			return filepath.Join(models, found[0]), nil
		case len(found) > 1:
			for _, f := range found {
				if f == "all-MiniLM-L6-v2" {
					return filepath.Join(models, f), nil
				}
			}
			return "", fmt.Errorf("%w: %d models in %s (%s): choose one with --model or CAIRN_MODEL", embed.ErrNoModel, len(found), models, strings.Join(found, ", "))
		}
	}
	if builtinModelID() == "" {
		return "", fmt.Errorf("%w: this cairn was built without the built-in model; add one with 'cairn model import DIR' (or pass --model DIR, or set CAIRN_MODEL; models live in %s)", embed.ErrNoModel, models)
	}
	return "", fmt.Errorf("%w: pass --model DIR, set CAIRN_MODEL, or add one with 'cairn model import DIR' (models live in %s)", embed.ErrNoModel, models)
}
