package embed

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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Registry sentinels; returned errors wrap them with context.
var (
	// ErrModelExists: a model of that name is already in the registry.
	ErrModelExists = errors.New("embed: model already exists")
	// ErrModelName: a model name that is not one plain path element.
	ErrModelName = errors.New("embed: invalid model name")
	// ErrCorruptCopy: a file of an imported model no longer has the
	// SHA-256 its manifest records.
	ErrCorruptCopy = errors.New("embed: model file does not match its manifest")
	// ErrManifestVersion: a manifest written by a newer cairn.
	ErrManifestVersion = errors.New("embed: model manifest of a newer format")
)

// ManifestName is the file, inside each imported model's directory, that
// records the model and the SHA-256 of every file it holds.
const ManifestName = "cairn-model.json"

// ManifestFormat is the format version Import writes. Readers accept 0
// (manifests written before the field existed: the same fields) to
// ManifestFormat, and refuse newer ones with ErrManifestVersion.
const ManifestFormat = 1

// Manifest describes one imported model (ManifestName, JSON).
type Manifest struct {
	Format   int               `json:"format"`
	Name     string            `json:"name"`
	ModelID  string            `json:"model_id"`
	Dim      int               `json:"dim"`
	Source   string            `json:"source"`
	Imported time.Time         `json:"imported"`
	Files    map[string]string `json:"files"` // relative path (slashes) -> hex SHA-256
}

// Progress reports the work of an import, a verification or a download.
type Progress struct {
	// Stage is "check" (opening the model and embedding one sentence),
	// "copy", "verify" or "download".
	Stage string
	// File is the file being worked on (relative to the model directory).
	File string
	// Done and Total are bytes of File; Total is -1 when unknown.
	Done, Total int64
}

// Registry is a directory of imported models: DIR/NAME/ holds one
// sentence-transformers model directory and its Manifest. Import writes
// through a temporary directory renamed into place, so a model is either
// complete or absent. A Registry holds no state besides its directory; it
// is safe for concurrent use by one process (two imports of one name race
// on the rename, and the loser fails with ErrModelExists).
type Registry struct {
	dir string
}

// NewRegistry returns the registry kept in dir (created on first import).
func NewRegistry(dir string) *Registry { return &Registry{dir: dir} }

// Dir is the registry's directory.
func (r *Registry) Dir() string { return r.dir }

// Path is the directory of the model called name (it may not exist).
func (r *Registry) Path(name string) string { return filepath.Join(r.dir, name) }

// ValidName reports whether name can name a model: one path element, not
// hidden.
func ValidName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%w: %q (one path element, not starting with a dot)", ErrModelName, name)
	}
	return nil
}

// ImportOptions configure Registry.Import. The zero value means defaults.
type ImportOptions struct {
	// Name is the model's name in the registry (default: the base name of
	// the source directory).
	Name string
	// Source is recorded in the manifest (default: the source directory).
	Source string
	// Progress, when set, is called as files are checked and copied.
	Progress func(Progress)
}

// Import checks that the model in src opens and embeds a sentence, copies
// its files into the registry (the weights once: model.safetensors when
// present, else model.onnx), re-hashes and re-opens the copy, writes the
// manifest and renames the copy into place.
func (r *Registry) Import(ctx context.Context, src string, opts ImportOptions) (*Manifest, error) {
	if opts.Name == "" {
		opts.Name = filepath.Base(filepath.Clean(src))
	}
	if opts.Source == "" {
		opts.Source = src
	}
	if err := ValidName(opts.Name); err != nil {
		return nil, err
	}
	dst := r.Path(opts.Name)
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("%w: %q in %s", ErrModelExists, opts.Name, r.dir)
	}
	report(opts.Progress, Progress{Stage: "check", Total: -1})
	man, err := checkModel(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("model %s does not load: %w", src, err)
	}
	files, err := modelFiles(src)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(r.dir, ".import-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	man.Files = map[string]string{}
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		to := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		sum, err := copyFile(filepath.Join(src, filepath.FromSlash(rel)), to, rel, opts.Progress)
		if err != nil {
			return nil, err
		}
		man.Files[rel] = sum
	}
	// The copy must hash as read and open as the same model.
	if err := verifyFiles(ctx, tmp, man.Files, opts.Progress); err != nil {
		return nil, fmt.Errorf("the copy of %s: %w", src, err)
	}
	again, err := checkModel(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("the imported copy does not load: %w", err)
	}
	if again.ModelID != man.ModelID {
		return nil, fmt.Errorf("%w: the imported copy has model id %s, the source %s", ErrBadModel, again.ModelID, man.ModelID)
	}
	man.Format, man.Name, man.Source, man.Imported = ManifestFormat, opts.Name, opts.Source, time.Now().UTC()
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileSync(filepath.Join(tmp, ManifestName), append(b, '\n')); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if _, serr := os.Stat(dst); serr == nil {
			return nil, fmt.Errorf("%w: %q in %s", ErrModelExists, opts.Name, r.dir)
		}
		return nil, err
	}
	return man, syncDir(r.dir)
}

// modelFiles lists the files of the model directory src that a model
// needs (relative, with slashes): JSON configs, the tokenizer's texts,
// the pooling and normalization modules, and one weights file.
func modelFiles(src string) ([]string, error) {
	_, err := os.Stat(filepath.Join(src, "model.safetensors"))
	hasSafetensors := err == nil
	var out []string
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || !modelSubdir(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if keepFile(rel, hasSafetensors) {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// modelSubdir: sentence-transformers keeps its pooling and normalization
// modules in numbered subdirectories (1_Pooling, 2_Normalize).
func modelSubdir(rel string) bool {
	return strings.HasSuffix(rel, "_Pooling") || strings.HasSuffix(rel, "_Normalize")
}

// keepFile says whether rel is copied. Of the weights only one copy is
// kept, the file Open reads (model.safetensors, else model.onnx): exports
// often ship both, doubling the size for nothing.
func keepFile(rel string, hasSafetensors bool) bool {
	base := filepath.Base(rel)
	switch filepath.Ext(rel) {
	case ".json", ".txt":
		return base != ManifestName
	case ".safetensors":
		return rel == "model.safetensors"
	case ".onnx":
		return rel == "model.onnx" && !hasSafetensors
	}
	return false
}

// checkModel opens the model in dir and embeds one sentence.
func checkModel(ctx context.Context, dir string) (*Manifest, error) {
	m, err := Open(ctx, dir, Options{CacheSize: -1})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	v, err := m.Embed(ctx, []string{"cairn checks that this model embeds a sentence."})
	if err != nil {
		return nil, err
	}
	if len(v) != 1 || len(v[0]) != m.Dim() {
		return nil, fmt.Errorf("%w: the model returned a vector of the wrong size", ErrBadModel)
	}
	for _, f := range v[0] {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("%w: the model returned a non-finite vector", ErrBadModel)
		}
	}
	return &Manifest{ModelID: m.ModelID(), Dim: m.Dim()}, nil
}

// verifyFiles re-hashes the files of dir against sums.
func verifyFiles(ctx context.Context, dir string, sums map[string]string, progress func(Progress)) error {
	rels := make([]string, 0, len(sums))
	for rel := range sums {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, err := hashFile(filepath.Join(dir, filepath.FromSlash(rel)), rel, progress)
		if err != nil {
			return err
		}
		if got != sums[rel] {
			return fmt.Errorf("%w: %s has sha256 %s, the manifest %s", ErrCorruptCopy, rel, got, sums[rel])
		}
	}
	return nil
}

// Entry is one model of List.
type Entry struct {
	Manifest
	Dir string `json:"dir"`
	// Err is nil for a usable model; it wraps ErrCorruptCopy when a file
	// differs from the manifest (ListOptions.Verify) and ErrBadModel when
	// the directory has no readable manifest.
	Err error `json:"-"`
}

// ListOptions configure Registry.List.
type ListOptions struct {
	// Verify re-hashes every file against its manifest.
	Verify bool
	// Progress, when set, is called as files are verified.
	Progress func(Progress)
}

// List returns the models in the registry by name. A missing registry
// directory is an empty registry.
func (r *Registry) List(ctx context.Context, opts ListOptions) ([]Entry, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := []Entry{}
	for _, d := range ents {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		e := Entry{Dir: r.Path(d.Name())}
		m, err := ReadManifest(e.Dir)
		if errors.Is(err, ErrManifestVersion) {
			e.Name, e.Err = d.Name(), err
			out = append(out, e)
			continue
		}
		if err != nil {
			e.Name, e.Err = d.Name(), fmt.Errorf("%w: no manifest (not imported with cairn model import): %w", ErrBadModel, err)
			out = append(out, e)
			continue
		}
		e.Manifest = *m
		if opts.Verify {
			e.Err = verifyFiles(ctx, e.Dir, m.Files, opts.Progress)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Names returns the names of the model directories in the registry,
// sorted (with or without a manifest).
func (r *Registry) Names() ([]string, error) {
	ents, err := os.ReadDir(r.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range ents {
		if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, d.Name())
		}
	}
	return out, nil
}

// ReadManifest reads the manifest of the model directory dir.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadModel, ManifestName, err)
	}
	if m.Format > ManifestFormat || m.Format < 0 {
		return nil, fmt.Errorf("%w: %s has format %d, this cairn reads up to %d", ErrManifestVersion, ManifestName, m.Format, ManifestFormat)
	}
	return &m, nil
}

func report(progress func(Progress), p Progress) {
	if progress != nil {
		progress(p)
	}
}

// progressCounter calls progress as bytes pass, at most every 64 KiB
// chunk io.Copy hands it, and once at the end.
type progressCounter struct {
	p        Progress
	progress func(Progress)
}

func (c *progressCounter) Write(b []byte) (int, error) {
	c.p.Done += int64(len(b))
	report(c.progress, c.p)
	return len(b), nil
}

func hashFile(p, rel string, progress func(Progress)) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	total := int64(-1)
	if st, err := f.Stat(); err == nil {
		total = st.Size()
	}
	h := sha256.New()
	pc := &progressCounter{p: Progress{Stage: "verify", File: rel, Total: total}, progress: progress}
	if _, err := io.Copy(io.MultiWriter(h, pc), f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(src, dst, rel string, progress func(Progress)) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	total := int64(-1)
	if st, err := in.Stat(); err == nil {
		total = st.Size()
	}
	out, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	pc := &progressCounter{p: Progress{Stage: "copy", File: rel, Total: total}, progress: progress}
	if _, err := io.Copy(io.MultiWriter(out, h, pc), in); err != nil {
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
