package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn/embed/internal/quant"
)

// Backend selects the encoder implementation.
type Backend string

const (
	// BackendNative is cairn's own BERT encoder (the default).
	BackendNative Backend = "native"
	// BackendHugot runs model.onnx with hugot's pure-Go ONNX backend.
	BackendHugot Backend = "hugot"
)

// Overflow says what Embed does with a text longer than the maximum length.
type Overflow int

const (
	// OverflowTruncate keeps the first MaxTokens tokens (the default); the
	// number of truncated texts is reported in Stats and EmbedDetailed.
	OverflowTruncate Overflow = iota
	// OverflowChunk embeds every window of MaxTokens tokens; Embed returns
	// the normalized mean of the windows' vectors, EmbedDetailed each window.
	OverflowChunk
	// OverflowError fails the call with ErrTooLong.
	OverflowError
)

// Options configures Open. The zero value means defaults.
type Options struct {
	// Backend: "" or BackendNative, or BackendHugot.
	Backend Backend
	// Kernels forces a kernel set for the native backend ("" = fastest available).
	Kernels Kernels
	// Name overrides the model name in ModelID (default: config.json's
	// _name_or_path base name, else the directory name).
	Name string
	// MaxTokens caps tokens per text including [CLS] and [SEP] (default: the
	// model's max_seq_length, else 256; never above the position table).
	MaxTokens int
	// Overflow is what happens to longer texts (default OverflowTruncate).
	Overflow Overflow
	// Prompt names a prompt of config_sentence_transformers.json (e.g.
	// "query") prefixed to every text; "" uses the model's default prompt, if any.
	Prompt string
	// Prefix, when set, is prefixed to every text instead of any prompt.
	Prefix string
	// BatchSize is the number of texts per forward pass (default 32).
	BatchSize int
	// QueueSize bounds the Embed calls waiting for the encoder (default 64);
	// further calls block until a slot frees or their context ends.
	QueueSize int
	// CacheSize is the LRU capacity in vectors (default 4096; negative disables).
	CacheSize int
	// Workers is the number of goroutines per forward pass (default GOMAXPROCS).
	Workers int
	// Logger receives load information (default: discard).
	Logger *slog.Logger
	// Weights, when not nil, is the content of the model's weights file
	// (model.safetensors, else model.onnx) already in memory, such as bytes
	// compiled into the binary: Open reads the weights from it instead of
	// the file, and neither copies nor modifies it (it may be read-only
	// memory; int8 weights are used from it in place).
	Weights []byte
	// WeightsSHA256 is the hex SHA-256 in the ModelID of Weights (that of
	// Weights, or for a packed file the one it records), when the caller
	// holds a checked one (the built-in model's): Open uses it instead of
	// hashing Weights. It needs Weights.
	WeightsSHA256 string
}

// Stats are counters since Open.
type Stats struct {
	Texts        uint64 // texts passed to Embed
	CacheHits    uint64
	CacheMisses  uint64
	CacheLen     int
	HitRate      float64 // CacheHits / (CacheHits + CacheMisses)
	Tokens       uint64  // tokens encoded (cache misses only)
	Batches      uint64  // forward passes
	Truncated    uint64  // texts cut at MaxTokens
	Chunked      uint64  // texts split into windows
	EncodeTime   time.Duration
	LoadDuration time.Duration
}

type encoder interface {
	encode(ctx context.Context, seqs [][]int32, pool Pooling) ([][]float32, error)
}

// Model embeds texts with one sentence-transformers model. It satisfies
// engine.Embedder. It is safe for concurrent use.
type Model struct {
	opts    Options
	md      *modelDir
	tok     *Tokenizer
	enc     encoder
	closer  func() error
	id      string
	prefix  string
	cache   *lru
	queue   chan struct{} // bounded queue of waiting calls
	run     chan struct{} // one forward pass at a time (each uses every core)
	closed  atomic.Bool
	done    chan struct{} // closed by Close
	closeMu sync.Once
	kernels Kernels

	texts, hits, misses, tokens, batches, truncated, chunked, encodeNS atomic.Uint64
	loadDur                                                            time.Duration
}

// Open loads the model in modelDir (config.json, tokenizer.json,
// model.safetensors and/or model.onnx, sentence-transformers pooling config).
func Open(ctx context.Context, modelDir string, opts Options) (*Model, error) {
	return open(ctx, os.DirFS(modelDir), modelDir, opts)
}

// OpenFS loads a model from the files of fsys laid out as a model
// directory for Open, reading them in memory (for a model compiled into the
// binary with go:embed, nothing is written to disk). Without Options.Name
// or a name in config.json, the model is named "model". The hugot backend
// needs a directory on disk and is refused.
func OpenFS(ctx context.Context, fsys fs.FS, opts Options) (*Model, error) {
	return open(ctx, fsys, "", opts)
}

// open loads the model in fsys; dir is its directory on disk ("" if none).
func open(ctx context.Context, fsys fs.FS, dir string, opts Options) (*Model, error) {
	start := time.Now()
	where := dir
	if where == "" {
		where = "the model"
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	md, err := readModelDir(fsys, where)
	if err != nil {
		return nil, err
	}
	// The tokenizer (a large JSON document) is parsed while the weights
	// are read and laid out: each is a good part of the load time.
	var (
		tok       *Tokenizer
		maxTok    int
		tokErr    error
		tokenized = make(chan struct{})
	)
	go func() {
		defer close(tokenized)
		tok, maxTok, tokErr = loadTokenizer(fsys, md, opts.MaxTokens)
	}()
	m, wf, weights, err := newModel(ctx, fsys, dir, where, md, opts)
	if err == nil && opts.Backend == BackendNative {
		err = m.openEncoder(dir, wf, weights)
	}
	<-tokenized
	if tokErr != nil {
		err = tokErr // the tokenizer is read first when both fail
	}
	if err != nil {
		if m != nil && m.closer != nil {
			_ = m.closer()
		}
		return nil, err
	}
	m.tok = tok
	if opts.Backend != BackendNative {
		if err := m.openEncoder(dir, wf, weights); err != nil {
			return nil, err
		}
	}
	m.loadDur = time.Since(start)
	opts.Logger.Info("embed: model loaded", "id", m.id, "backend", opts.Backend, "kernels", m.kernels,
		"dim", md.cfg.Hidden, "max_tokens", maxTok, "pooling", md.pooling, "took", m.loadDur)
	return m, nil
}

// newModel reads the weights (from opts.Weights, else file wf of fsys)
// and returns the Model without its tokenizer and encoder.
func newModel(ctx context.Context, fsys fs.FS, dir, where string, md *modelDir, opts Options) (*Model, string, []byte, error) {
	wf, err := weightsFile(fsys, where)
	if err != nil {
		return nil, "", nil, err
	}
	weights := opts.Weights
	if weights == nil {
		if weights, err = fs.ReadFile(fsys, wf); err != nil {
			return nil, "", nil, fmt.Errorf("embed: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", nil, err
	}
	sum := opts.WeightsSHA256
	if sum == "" {
		sum = weightsSHA256(weights)
	}
	m := &Model{
		opts:  opts,
		md:    md,
		id:    modelName(opts.Name, md, dir) + "@sha256:" + sum,
		queue: make(chan struct{}, opts.QueueSize),
		run:   make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	if m.prefix, err = textPrefix(opts, md); err != nil {
		return nil, "", nil, err
	}
	if opts.CacheSize > 0 {
		m.cache = newLRU(opts.CacheSize)
	}
	return m, wf, weights, nil
}

// weightsSHA256 is the hash in a model's id: the SHA-256 of its weights
// file, or for a packed file (format version 3 of embed/internal/quant, the
// same numbers laid out for the kernels) that of the file it unpacks to,
// which it records, so packing does not change the model's identity.
func weightsSHA256(weights []byte) string {
	if sum, ok := quant.UnpackedSHA256(weights); ok {
		return sum
	}
	h := sha256.Sum256(weights)
	return hex.EncodeToString(h[:])
}

// withDefaults returns a copy of opts with zero fields set to their
// defaults, or an error naming an invalid field.
func (opts Options) withDefaults() (Options, error) {
	if opts.Backend == "" {
		opts.Backend = BackendNative
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 32
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 64
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = 4096
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Overflow < OverflowTruncate || opts.Overflow > OverflowError {
		return opts, fmt.Errorf("embed: invalid Overflow %d", opts.Overflow)
	}
	if opts.WeightsSHA256 != "" {
		if b, err := hex.DecodeString(opts.WeightsSHA256); err != nil || len(b) != sha256.Size || opts.Weights == nil {
			return opts, fmt.Errorf("embed: invalid WeightsSHA256 %q: want the 64 hex digits of the SHA-256 of Options.Weights, set with it", opts.WeightsSHA256)
		}
	}
	return opts, nil
}

// loadTokenizer parses tokenizer.json for inputs of at most maxTokens
// tokens (0: the model's max_seq_length, else 256; never beyond its
// position table) and returns it with that bound.
func loadTokenizer(fsys fs.FS, md *modelDir, maxTokens int) (*Tokenizer, int, error) {
	maxTok := maxTokens
	if maxTok <= 0 {
		maxTok = md.maxSeq
	}
	if maxTok <= 0 {
		maxTok = 256
	}
	maxTok = min(maxTok, md.cfg.MaxPos)
	tokJSON, err := fs.ReadFile(fsys, "tokenizer.json")
	if err != nil {
		return nil, 0, fmt.Errorf("embed: read tokenizer: %w", err)
	}
	tok, err := ParseTokenizer(tokJSON, maxTok)
	if err != nil {
		return nil, 0, err
	}
	if tok.VocabSize() > md.cfg.Vocab {
		return nil, 0, fmt.Errorf("%w: tokenizer has %d ids, model vocabulary %d", ErrBadModel, tok.VocabSize(), md.cfg.Vocab)
	}
	return tok, maxTok, nil
}

// modelName is the name part of the model id: Options.Name, else the name
// in config.json, else the directory's base name, else "model".
func modelName(name string, md *modelDir, dir string) string {
	if name == "" && md.cfg.NameOrPath != "" {
		name = filepath.Base(md.cfg.NameOrPath)
	}
	if name == "" && dir != "" {
		name = filepath.Base(filepath.Clean(dir))
	}
	if name == "" {
		name = "model"
	}
	return name
}

// textPrefix is the text put before every input: Options.Prefix, else the
// named Options.Prompt, else the model's default prompt.
func textPrefix(opts Options, md *modelDir) (string, error) {
	switch {
	case opts.Prefix != "":
		return opts.Prefix, nil
	case opts.Prompt != "":
		p, ok := md.prompts[opts.Prompt]
		if !ok {
			return "", fmt.Errorf("%w: no prompt %q in config_sentence_transformers.json", ErrBadModel, opts.Prompt)
		}
		return p, nil
	case md.defPrompt != "":
		return md.prompts[md.defPrompt], nil
	}
	return "", nil
}

// openEncoder sets up m's encoder for its backend from weights, the
// contents of weights file wf.
func (m *Model) openEncoder(dir, wf string, weights []byte) error {
	switch m.opts.Backend {
	case BackendNative:
		ks, err := selectKernels(m.opts.Kernels)
		if err != nil {
			return err
		}
		var ts map[string]rawTensor
		if wf == "model.safetensors" {
			ts, err = parseSafetensors(weights)
		} else {
			ts, err = parseONNXWeights(weights)
		}
		if err != nil {
			return err
		}
		weights = nil
		b, err := newBERT(m.md.cfg, ts, ks, m.opts.Workers)
		if err != nil {
			return err
		}
		m.enc, m.kernels = b, ks.name
	case BackendHugot:
		weights = nil
		if dir == "" {
			return fmt.Errorf("%w: the hugot backend needs a model directory on disk", ErrUnsupported)
		}
		h, err := newHugotEncoder(dir, m.md.cfg.Hidden)
		if err != nil {
			return err
		}
		m.enc, m.closer = h, h.close
	default:
		return fmt.Errorf("%w: backend %q", ErrUnsupported, m.opts.Backend)
	}
	return nil
}

// Dim is the vector dimension.
func (m *Model) Dim() int { return m.md.cfg.Hidden }

// ModelID is the model name, "@sha256:", and the hex SHA-256 of the weights
// file (model.safetensors, else model.onnx): the same for both backends.
func (m *Model) ModelID() string { return m.id }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Kernels is the kernel set the native backend runs ("" for hugot).
func (m *Model) Kernels() Kernels { return m.kernels }

// Pooling is the model's pooling mode.
func (m *Model) Pooling() Pooling { return m.md.pooling }

// MaxTokens is the per-text token limit including [CLS] and [SEP].
func (m *Model) MaxTokens() int { return m.tok.MaxLen() }

// Stats returns counters since Open.
func (m *Model) Stats() Stats {
	s := Stats{
		Texts: m.texts.Load(), CacheHits: m.hits.Load(), CacheMisses: m.misses.Load(),
		Tokens: m.tokens.Load(), Batches: m.batches.Load(), Truncated: m.truncated.Load(),
		Chunked: m.chunked.Load(), EncodeTime: time.Duration(m.encodeNS.Load()), LoadDuration: m.loadDur,
	}
	if m.cache != nil {
		s.CacheLen = m.cache.len()
	}
	if n := s.CacheHits + s.CacheMisses; n > 0 {
		s.HitRate = float64(s.CacheHits) / float64(n)
	}
	return s
}

// Close releases the model. It is idempotent; Embed fails with ErrClosed afterwards.
func (m *Model) Close() error {
	var err error
	m.closeMu.Do(func() {
		m.closed.Store(true)
		close(m.done)
		// Wait for a running forward pass.
		m.run <- struct{}{}
		if m.closer != nil {
			err = m.closer()
		}
	})
	return err
}

// Result is the outcome of embedding one text.
type Result struct {
	// Vector is the text's embedding (for OverflowChunk, the normalized mean of Chunks).
	Vector []float32
	// Chunks holds one vector per window when the text was chunked.
	Chunks [][]float32
	// Tokens is the text's token count before truncation, [CLS] and [SEP]
	// included (-1 for a cache hit, which skips tokenization).
	Tokens int
	// Truncated is the number of word pieces dropped.
	Truncated int
	// Cached reports a cache hit.
	Cached bool
}

// Embed returns one L2-normalized vector per text.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	res, err := m.EmbedDetailed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(res))
	for i := range res {
		out[i] = res[i].Vector
	}
	return out, nil
}

type job struct {
	text   int
	chunk  int
	ids    []int32
	result []float32
}

// EmbedDetailed is Embed with per-text token counts, truncation, chunks and cache hits.
func (m *Model) EmbedDetailed(ctx context.Context, texts []string) ([]Result, error) {
	if m.closed.Load() {
		return nil, ErrClosed
	}
	select {
	case m.queue <- struct{}{}:
	case <-m.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-m.queue }()
	m.texts.Add(uint64(len(texts)))
	res := make([]Result, len(texts))
	keys := make([][32]byte, len(texts))
	var jobs []job
	for i, t := range texts {
		if m.cache != nil {
			keys[i] = cacheKey(m.prefix, t)
			if v, ok := m.cache.get(keys[i]); ok {
				m.hits.Add(1)
				res[i] = Result{Vector: v, Cached: true, Tokens: -1}
				continue
			}
			m.misses.Add(1)
		}
		pieces := m.tok.Pieces(m.prefix + t)
		max := m.tok.MaxLen() - 2
		res[i].Tokens = len(pieces) + 2
		if len(pieces) <= max {
			jobs = append(jobs, job{text: i, ids: m.wrap(pieces)})
			continue
		}
		switch m.opts.Overflow {
		case OverflowError:
			return nil, fmt.Errorf("%w: text %d has %d tokens, the limit is %d", ErrTooLong, i, len(pieces)+2, max+2)
		case OverflowChunk:
			m.chunked.Add(1)
			for c := 0; c*max < len(pieces); c++ {
				jobs = append(jobs, job{text: i, chunk: c, ids: m.wrap(pieces[c*max : min(len(pieces), (c+1)*max)])})
			}
		default:
			m.truncated.Add(1)
			res[i].Truncated = len(pieces) - max
			jobs = append(jobs, job{text: i, ids: m.wrap(pieces[:max])})
		}
	}
	for lo := 0; lo < len(jobs); lo += m.opts.BatchSize {
		batch := jobs[lo:min(len(jobs), lo+m.opts.BatchSize)]
		if err := m.forward(ctx, batch); err != nil {
			return nil, err
		}
	}
	for _, j := range jobs {
		r := &res[j.text]
		if m.opts.Overflow == OverflowChunk && res[j.text].Tokens-2 > m.tok.MaxLen()-2 {
			r.Chunks = append(r.Chunks, j.result)
			continue
		}
		r.Vector = j.result
	}
	for i := range res {
		r := &res[i]
		if r.Chunks != nil {
			mean := make([]float32, m.Dim())
			for _, c := range r.Chunks {
				for d, v := range c {
					mean[d] += v
				}
			}
			l2normalize(mean)
			r.Vector = mean
		}
		if m.cache != nil && !r.Cached {
			m.cache.put(keys[i], r.Vector)
		}
	}
	return res, nil
}

func (m *Model) wrap(pieces []int32) []int32 {
	ids := make([]int32, 0, len(pieces)+2)
	ids = append(ids, m.tok.clsID)
	ids = append(ids, pieces...)
	return append(ids, m.tok.sepID)
}

func (m *Model) forward(ctx context.Context, batch []job) error {
	select {
	case m.run <- struct{}{}:
	case <-m.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-m.run }()
	if m.closed.Load() {
		return ErrClosed
	}
	seqs := make([][]int32, len(batch))
	ntok := 0
	for i := range batch {
		seqs[i] = batch[i].ids
		ntok += len(seqs[i])
	}
	start := time.Now()
	vecs, err := m.enc.encode(ctx, seqs, m.md.pooling)
	if err != nil {
		return err
	}
	m.encodeNS.Add(uint64(time.Since(start)))
	m.batches.Add(1)
	m.tokens.Add(uint64(ntok))
	for i := range batch {
		l2normalize(vecs[i])
		batch[i].result = vecs[i]
	}
	return nil
}

func l2normalize(v []float32) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i, f := range v {
		v[i] = float32(float64(f) * inv)
	}
}

// Prefix is the text prefixed to every input (from Options or the model's prompts).
func (m *Model) Prefix() string { return m.prefix }
