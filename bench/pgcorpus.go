package bench

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cairn-dev/cairn/engine"
)

// Ranked runs query q with req as template (Query and Limit set) and
// returns the ranked document ids and the results.
func (c *Corpus) Ranked(ctx context.Context, req engine.SearchRequest, q Query, limit int) ([]string, []engine.SearchResult, error) {
	req.Query, req.Limit = q.Text, limit
	req.MinScore = everyResult(req.MinScore)
	res, err := c.Engine.Search(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	var ranked []string
	for _, x := range res {
		ranked = append(ranked, c.docsOf[x.Message.ID]...)
	}
	return ranked, res, nil
}

// DocIDs returns the ids of the documents stored as message id.
func (c *Corpus) DocIDs(id int64) []string { return c.docsOf[id] }

// NDCG is nDCG@k of ranked against the query's judgements (linear gains).
func NDCG(ranked []string, rel map[string]float64, k int) float64 { return ndcg(ranked, rel, k) }

// LoadDevSet loads dev set name (cranfield, cosqa or stsb) from the
// datasets folder data.
func LoadDevSet(data, name string) (*RetrievalSet, error) {
	switch name {
	case "cranfield":
		return LoadBEIR("cranfield", filepath.Join(data, "cranfield"))
	case "cosqa":
		return LoadBEIR("cosqa-dev", filepath.Join(data, "cosqa", "dev"))
	case "stsb":
		s, _, err := LoadSTSBRetrieval(filepath.Join(data, "stsb", "dev", "pairs.tsv"))
		return s, err
	}
	return nil, fmt.Errorf("unknown set %q", name)
}
