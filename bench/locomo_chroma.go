package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/cairn-dev/cairn/engine"
)

// EvaluateLoCoMoChroma runs the LoCoMo protocol against a Chroma server
// (API v2) at url as a peer: one collection per conversation (cosine
// space) holding each turn's content and its embedding by emb, and each
// question embedded by emb and queried for its top 10. Chroma searches
// vectors only, so this is the dense-retrieval peer with the same model.
func EvaluateLoCoMoChroma(ctx context.Context, url string, convs []Conversation, emb engine.Embedder, captions bool) (LoCoMoResult, error) {
	base := url + "/api/v2/tenants/default_tenant/databases/default_database/collections"
	acc := map[string]*TurnMetrics{"overall": {}}
	for _, c := range LoCoMoCategories() {
		acc[c] = &TurnMetrics{}
	}
	for _, c := range convs {
		var coll struct{ ID string }
		if err := ChromaPost(ctx, base, map[string]any{"name": LoCoMoChannel(c), "metadata": map[string]any{"hnsw:space": "cosine"}}, &coll); err != nil {
			return nil, err
		}
		ids := make([]string, len(c.Turns))
		docs := make([]string, len(c.Turns))
		for i, t := range c.Turns {
			ids[i], docs[i] = t.DiaID, TurnContent(t, captions)
		}
		vecs, err := embedAll(ctx, emb, docs)
		if err != nil {
			return nil, err
		}
		if err := ChromaPost(ctx, base+"/"+coll.ID+"/add", map[string]any{"ids": ids, "embeddings": vecs, "documents": docs}, nil); err != nil {
			return nil, err
		}
		for _, q := range c.Questions {
			qv, err := emb.Embed(ctx, []string{q.Text})
			if err != nil {
				return nil, err
			}
			var res struct{ IDs [][]string }
			if err := ChromaPost(ctx, base+"/"+coll.ID+"/query", map[string]any{"query_embeddings": qv, "n_results": 10, "include": []string{"distances"}}, &res); err != nil {
				return nil, err
			}
			if len(res.IDs) != 1 {
				return nil, fmt.Errorf("bench: chroma query answered %d id lists", len(res.IDs))
			}
			acc[q.Category].add(res.IDs[0], q.Evidence)
			acc["overall"].add(res.IDs[0], q.Evidence)
		}
	}
	out := LoCoMoResult{}
	for k, m := range acc {
		m.mean()
		out[k] = *m
	}
	return out, nil
}

// ChromaPost posts body as JSON to url of a Chroma server and decodes the
// answer into out (when not nil); a non-2xx answer is an error with its body.
func ChromaPost(ctx context.Context, url string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("bench: chroma %s: %s: %s", url, resp.Status, rb)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(rb, out)
}
