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
	for _, err := range []error{cause, fmt.Errorf("vecstore: add: %w", cause), fmt.Errorf("%w: %w", chroma.ErrCorrupt, cause)} {
		got := fromStore(err)
		if got.status != http.StatusInsufficientStorage || strings.Contains(got.message, "/") || !strings.Contains(got.message, "Disk full") {
			t.Errorf("%v: %d %q", err, got.status, got.message)
		}
	}
}

// TestStatusOfRules: the store's classes say what kind of refusal an error
// is; Chroma's status also depends on the rule for the refusals its
// framework makes before validation (422) and for an unknown query id (500).
func TestStatusOfRules(t *testing.T) {
	for _, tc := range []struct {
		err  *chroma.Error
		want int
		name string
	}{
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleName, Field: "name"}, 400, nameInvalid},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleMissing, Field: "embeddings"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleNullVector, Field: "embeddings"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleNullMetadata, Field: "metadatas"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleImmutable, Field: "new_configuration.hnsw"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleInclude, Field: "include"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleNResults, Field: "n_results"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleSpace, Field: "space"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleNegative, Field: "limit, offset"}, 422, nameChroma},
		{&chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleNegative, Field: "dimension"}, 400, nameInvalid},
		{&chroma.Error{Class: chroma.ErrNotFound, Rule: chroma.RuleUnknownID, Field: "ids"}, 500, nameInternal},
		{&chroma.Error{Class: chroma.ErrNotFound, Rule: chroma.RuleNoCollection, Field: "id"}, 404, nameNotFound},
		{&chroma.Error{Class: chroma.ErrExists, Rule: chroma.RuleTaken, Field: "collection", Value: "c"}, 409, nameChroma},
		{&chroma.Error{Class: chroma.ErrForbidden, Rule: chroma.RuleResetDisabled}, 403, nameChroma},
		{&chroma.Error{Class: chroma.ErrDimensionMismatch, Rule: chroma.RuleDimension}, 400, nameInvalid},
		{&chroma.Error{Class: chroma.ErrEmbedderMismatch, Rule: chroma.RuleModel, Reason: "another model"}, 400, nameInvalid},
	} {
		got := fromStore(tc.err)
		if got.status != tc.want || got.name != tc.name {
			t.Errorf("%s (field %q): %d %s, want %d %s", tc.err.Rule, tc.err.Field, got.status, got.name, tc.want, tc.name)
		}
	}
}
