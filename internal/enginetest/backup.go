package enginetest

import (
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// OpenArchive opens a backup archive decompressed (the tar stream inside);
// it is closed when the test ends.
func OpenArchive(t testing.TB, archive string) io.Reader {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zr.Close)
	return zr
}
