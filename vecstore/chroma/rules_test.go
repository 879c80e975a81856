package chroma_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// ParseCollectionID accepts exactly the ids google/uuid parses in the
// hyphenated 36-character form, and answers the same canonical form.
func FuzzParseCollectionID(f *testing.F) {
	for _, s := range []string{
		"2d4a3f6e-1b2c-4d5e-8f90-a1b2c3d4e5f6",
		"2D4A3F6E-1B2C-4D5E-8F90-A1B2C3D4E5F6",
		"2d4a3f6e1b2c4d5e8f90a1b2c3d4e5f6",
		"{2d4a3f6e-1b2c-4d5e-8f90-a1b2c3d4e5f6}",
		"urn:uuid:2d4a3f6e-1b2c-4d5e-8f90-a1b2c3d4e5f6",
		"2d4a3f6e-1b2c-4d5e-8f90-a1b2c3d4e5fg",
		"2d4a3f6e+1b2c-4d5e-8f90-a1b2c3d4e5f6",
		"not-a-uuid", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := chroma.ParseCollectionID(s)
		u, uerr := uuid.Parse(s)
		want, ok := u.String(), uerr == nil && len(s) == 36
		if !ok {
			var e *chroma.Error
			if !errors.As(err, &e) || !errors.Is(err, chroma.ErrInvalid) || e.Rule != chroma.RuleCollectionID || e.Value != s {
				t.Fatalf("ParseCollectionID(%q) = %q, %v; want a RuleCollectionID refusal", s, got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("ParseCollectionID(%q) = %q, %v; want %q", s, got, err, want)
		}
	})
}
