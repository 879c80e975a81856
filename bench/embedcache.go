package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn/engine"
)

// CachedEmbedder wraps an embedder with a vector cache on disk, keyed by
// the model id and the SHA-256 of the text, so that quality reruns do not
// re-embed the dev corpora (minutes of CPU on a shared 2-core machine).
// It is safe for concurrent use.
//
// File: DIR/<model id, sanitized>.vecs, a sequence of records
// [32-byte SHA-256 of the text][Dim little-endian float32], appended
// (O_APPEND, one write per Embed call) so that concurrent runs can share
// it; a torn last record (a killed run) is cut off at open.
type CachedEmbedder struct {
	inner engine.Embedder
	path  string
	mu    struct {
		sync.Mutex
		vecs map[[32]byte][]float32
		f    *os.File
	}
}

// OpenCachedEmbedder loads (or creates) the cache file of inner's model in dir.
func OpenCachedEmbedder(inner engine.Embedder, dir string) (*CachedEmbedder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == ':' || r == '@' || r == ' ' {
			return '_'
		}
		return r
	}, inner.ModelID())
	c := &CachedEmbedder{inner: inner, path: filepath.Join(dir, name+".vecs")}
	c.mu.vecs = map[[32]byte][]float32{}
	f, err := os.OpenFile(c.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	rec := 32 + 4*inner.Dim()
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, rec)
	var good int64
	for {
		if _, err := io.ReadFull(r, buf); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			f.Close()
			return nil, fmt.Errorf("bench: read %s: %w", c.path, err)
		}
		var k [32]byte
		copy(k[:], buf)
		v := make([]float32, inner.Dim())
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[32+4*i:]))
		}
		c.mu.vecs[k] = v
		good += int64(rec)
	}
	if st, err := f.Stat(); err == nil && st.Size()%int64(rec) != 0 {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, err
		}
	}
	c.mu.f = f
	return c, nil
}

// Dim returns the inner embedder's dimension.
func (c *CachedEmbedder) Dim() int { return c.inner.Dim() }

// ModelID returns the inner embedder's model id.
func (c *CachedEmbedder) ModelID() string { return c.inner.ModelID() }

// Len is the number of cached vectors.
func (c *CachedEmbedder) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.vecs)
}

// Embed returns cached vectors and embeds (and records) the rest.
func (c *CachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var miss []int
	c.mu.Lock()
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := c.mu.vecs[keys[i]]; ok {
			out[i] = v
		} else {
			miss = append(miss, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	todo := make([]string, len(miss))
	for j, i := range miss {
		todo[j] = texts[i]
	}
	vs, err := c.inner.Embed(ctx, todo)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(todo) {
		return nil, fmt.Errorf("bench: embedder returned %d vectors for %d texts", len(vs), len(todo))
	}
	rec := make([]byte, 0, len(miss)*(32+4*c.Dim()))
	for j, i := range miss {
		out[i] = vs[j]
		rec = append(rec, keys[i][:]...)
		for _, x := range vs[j] {
			rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(x))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range miss {
		c.mu.vecs[keys[i]] = vs[j]
	}
	if c.mu.f != nil {
		if _, err := c.mu.f.Write(rec); err != nil {
			return nil, fmt.Errorf("bench: write %s: %w", c.path, err)
		}
	}
	return out, nil
}

// Close closes the cache file (vectors already written stay).
func (c *CachedEmbedder) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.f == nil {
		return nil
	}
	err := c.mu.f.Close()
	c.mu.f = nil
	return err
}
