package chromaapi

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// TestDiskFullAnswer: a store write that found the disk full answers 507
// with a message naming no path, whatever class the store wrapped it in.
func TestDiskFullAnswer(t *testing.T) {
	cause := &os.PathError{Op: "write", Path: "/home/someone/.local/share/cairn/vectors.db", Err: syscall.ENOSPC}
	for _, err := range []error{cause, fmt.Errorf("vecstore: add: %w", cause), fmt.Errorf("%w: %w", chroma.ErrInternal, cause)} {
		got := fromStore(err)
		if got.status != http.StatusInsufficientStorage || strings.Contains(got.message, "/") || !strings.Contains(got.message, "Disk full") {
			t.Errorf("%v: %d %q", err, got.status, got.message)
		}
	}
}
