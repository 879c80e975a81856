package builtin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"strings"
	"unsafe"

	cembed "github.com/cairn-dev/cairn/embed"
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

// weights is the file whose hash identifies the model (as embed.Open hashes it).
const weights = "model.safetensors"

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
// Name, "@sha256:" and the SHA-256 of model.safetensors. It is known
// without loading the model.
func ModelID() string { return Name + "@sha256:" + weightsSHA256() }

// weightsSHA256 is the hex SHA-256 of model.safetensors: its SHA256SUMS
// entry (TestSHA256SUMS holds it to the bytes), else computed.
func weightsSHA256() string {
	sums, err := fs.ReadFile(Files(), "SHA256SUMS")
	if err == nil {
		sc := bufio.NewScanner(bytes.NewReader(sums))
		for sc.Scan() {
			if sum, name, ok := strings.Cut(sc.Text(), "  "); ok && name == weights && len(sum) == 64 {
				return sum
			}
		}
	}
	h := sha256.Sum256([]byte(weightsBytes))
	return hex.EncodeToString(h[:])
}

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
