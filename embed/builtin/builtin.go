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
func ModelID() string {
	sums, err := fs.ReadFile(Files(), "SHA256SUMS")
	if err == nil {
		sc := bufio.NewScanner(bytes.NewReader(sums))
		for sc.Scan() {
			if sum, name, ok := strings.Cut(sc.Text(), "  "); ok && name == weights && len(sum) == 64 {
				return Name + "@sha256:" + sum
			}
		}
	}
	// Without a usable SHA256SUMS entry, hash the weights as embed.Open does.
	b, _ := fs.ReadFile(Files(), weights)
	h := sha256.Sum256(b)
	return Name + "@sha256:" + hex.EncodeToString(h[:])
}

// Open loads the built-in model from the binary's own bytes. Options are
// those of embed.Open; Options.Name defaults to Name.
func Open(ctx context.Context, opts cembed.Options) (*cembed.Model, error) {
	if opts.Name == "" {
		opts.Name = Name
	}
	return cembed.OpenFS(ctx, Files(), opts)
}
