package builtin

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"
	"unsafe"

	cembed "github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/internal/quant"
)

// Name is the built-in model's name, the prefix of its ModelID.
const Name = "all-MiniLM-L6-v2"

// License is the SPDX identifier of the model's license.
const License = "Apache-2.0"

// Dim is the dimension of its vectors.
const Dim = 384

// files holds the generated model directory; the "all:" prefix keeps
// nothing out (every file is listed in SHA256SUMS).
//
//go:embed all:minilm
var files embed.FS

// weightsBytes is the same file as a string: the linker keeps one copy of
// the bytes in the binary's read-only data, which Open hands to the encoder
// in place (reading it from files would copy 25 MB at every start).
//
//go:embed minilm/model.safetensors
var weightsBytes string

// Files returns the model directory: the files embed.Open reads, with
// README.md (the model card), LICENSE, NOTICE and SHA256SUMS.
func Files() fs.FS {
	sub, err := fs.Sub(files, "minilm")
	if err != nil {
		panic(err) // unreachable: "minilm" is a valid, embedded directory
	}
	return sub
}

// ModelID is the ModelID of the model Open returns with no Options.Name:
// Name, "@sha256:" and the SHA-256 of the weights (of model.safetensors
// unpacked: the file stores the Linear weights laid out for the encoder and
// records the hash of the plain int8 file they come from, so the identity
// of the numbers does not depend on their layout). It is known without
// loading the model.
func ModelID() string { return Name + "@sha256:" + weightsSHA256() }

// weightsSHA256 is the SHA-256 recorded in model.safetensors' header
// (TestPackedWeights holds it to the unpacked bytes), read once.
var weightsSHA256 = sync.OnceValue(func() string {
	b := unsafe.Slice(unsafe.StringData(weightsBytes), len(weightsBytes))
	if sum, ok := quant.UnpackedSHA256(b); ok {
		return sum
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
})

// Open loads the built-in model from the binary's own bytes, in place.
// Options are those of embed.Open; Options.Name defaults to Name.
func Open(ctx context.Context, opts cembed.Options) (*cembed.Model, error) {
	if opts.Name == "" {
		opts.Name = Name
	}
	if opts.Weights == nil {
		// Read-only data: embed reads these bytes and never writes them.
		opts.Weights = unsafe.Slice(unsafe.StringData(weightsBytes), len(weightsBytes))
		opts.WeightsSHA256 = weightsSHA256()
	}
	return cembed.OpenFS(ctx, Files(), opts)
}
