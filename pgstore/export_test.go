package pgstore

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// KeywordExhaustive is Keyword without pruning: every message holding a
// query term is scored (the reference of the pruning tests).
func (s *Store) KeywordExhaustive(ctx context.Context, terms []string, f *where.Expr, depth int) ([]engine.ScoredID, error) {
	return s.keywordTopK(ctx, terms, f, depth, false)
}
