// Package embed turns texts into sentence embeddings in-process, in pure Go:
// no Python, no server, no network, no cgo.
//
// Open loads a sentence-transformers model directory (config.json,
// tokenizer.json, model.safetensors and/or model.onnx, modules.json,
// 1_Pooling/config.json, optionally sentence_bert_config.json and
// config_sentence_transformers.json prompts). OpenFS reads the same files
// from an fs.FS in memory (the built-in model of embed/builtin, compiled into
// the binary, is never extracted to disk). The returned *Model satisfies
// engine.Embedder (Embed, Dim, ModelID) without importing engine.
//
// Two backends run the same model directory:
//
//   - native (default): cairn's own BERT encoder. Weights come from
//     model.safetensors (F32/F16/BF16, or I8 with per-row or per-group scales as
//     embed/internal/quant describes: kept as int8; the Linear weights are
//     multiplied in integers by activations quantized to int8 per token and
//     group (gemmi8.go: AVX2 VPMADDUBSW/VPMADDWD, exact int32 sums per group,
//     scales applied in float32; a pure-Go twin gives the same bits), the word
//     table dequantized row by row when looked up) or, without it,
//     from the initializers of a standard Hugging Face ONNX export (the anonymous MatMul weights
//     are matched to layers by their node names). The sequences of a batch
//     are packed into one matrix without padding; matrix multiplies and
//     attention run on a 4-row GEMM micro-kernel with weights pre-packed in
//     column panels, in Go assembly for AVX-512 and AVX2+FMA (chosen at run
//     time with golang.org/x/sys/cpu) with a pure-Go fallback, over every
//     core. Mean or CLS pooling, then L2 normalization.
//   - hugot: model.onnx on knights-analytics/hugot's pure-Go (GoMLX
//     simplego) backend, for models the native encoder does not run and as
//     the cross-check in tests. cairn's tokenizer and pooling are used, so
//     only the encoder differs. It is compiled only with the build tag
//     hugot (go test -tags hugot ./embed/ runs the cross-check); without it,
//     BackendHugot fails with ErrUnsupported and neither hugot nor GoMLX is
//     linked.
//
// Tokenizer is a WordPiece tokenizer reproducing Hugging Face's
// BertTokenizer (tokenizer.json with BertNormalizer, BertPreTokenizer,
// WordPiece): text cleaning, control characters, CJK spacing, accent
// stripping (strip_accents null follows lowercase), lowercasing,
// punctuation splitting, [UNK], added special tokens, truncation. It never
// panics on any input, including invalid UTF-8.
//
// ModelID is the model's name, "@sha256:" and the SHA-256 of the weights
// file (model.safetensors, else model.onnx), the same for both backends;
// for a packed file (quant format version 3: the same numbers laid out for
// the kernels) the SHA-256 it records of the file it unpacks to, so that
// packing does not change a model's identity.
// Options.Weights hands Open weights already in memory (the built-in model's
// bytes in the binary), used in place and never written, with
// Options.WeightsSHA256 when their hash is already known and checked.
// Vectors are always L2-normalized.
//
// Model is safe for concurrent use: Embed calls wait in a bounded queue
// (Options.QueueSize), one forward pass runs at a time (it uses every
// core), results are cached in an LRU keyed by the SHA-256 of the prompt
// and text, and Stats reports the hit rate, truncations and timings. Texts
// over the token limit are truncated (reported), chunked, or refused, as
// Options.Overflow says. Close is idempotent.
//
// Registry keeps imported models in a directory (a data dir's models/):
// Import checks that a model opens and embeds, copies its files (one
// weights file: model.safetensors, else model.onnx) through a temporary
// directory and a rename, and writes cairn-model.json, the one format embed
// owns: JSON with "format" (ManifestFormat; 0 when absent, newer refused
// with ErrManifestVersion), the model id, dimension, source and the SHA-256
// of every file, which List re-checks. Pull downloads a model from a
// Hugging Face-compatible server, then imports it: the only network access
// in cairn, and only on that command. Every step reports Progress.
//
// embed must not import any cairn package (its own internal packages
// aside), and must not embed model weights: only importers of embed/builtin
// carry them. It reads, but does not define, the int8 safetensors
// convention of embed/internal/quant (format versions 1, 2 and 3, frozen
// fixtures testdata/quant_v1.safetensors, quant_v2.safetensors and
// quant_v3.safetensors); a version-3 file's panels, scales and float32
// tensors are used where they lie (for the built-in model: the binary's
// read-only data, so opening it copies and rearranges nothing).
//
// Test models (seeded random weights, Go-generated) come from
// embed/internal/testmodel (go run ./embed/testdata/gen -out DIR); the numpy
// reference vectors and the tokenizer parity corpus in testdata/ were
// recorded once with testdata/gen/reference.py and tokref.py. A second real
// model, bge-small-en-v1.5 (a Hugging Face ONNX export: 12 layers, 512
// positions, CLS pooling), is held to onnxruntime's vectors on the same file
// when `make bge-small` has fetched it (TestBGESmallEmbeddingParity).
package embed
