package cairnapi

import (
	"github.com/cairn-dev/cairn/engine/ops"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// defaultNeighbours is each side of GET /messages/{id}/neighbours without
// before/after.
const defaultNeighbours = 5

func (h *Handler) neighbours(r *http.Request) (any, int, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, 0, err
	}
	before, err := queryInt(r, "before", defaultNeighbours, 0, engine.MaxNeighbours)
	if err != nil {
		return nil, 0, err
	}
	after, err := queryInt(r, "after", defaultNeighbours, 0, engine.MaxNeighbours)
	if err != nil {
		return nil, 0, err
	}
	n, err := h.opts.Engine.Neighbours(r.Context(), id, before, after)
	if err != nil {
		return nil, 0, err
	}
	return n, http.StatusOK, nil
}

// timelineBuckets are the bucket widths GET /stats/timeline takes by name.
var timelineBuckets = map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour}

func (h *Handler) timeline(r *http.Request) (any, int, error) {
	q := r.URL.Query()
	name := q.Get("bucket")
	if name == "" {
		name = "day"
	}
	width, ok := timelineBuckets[name]
	if !ok {
		return nil, 0, invalidf("bucket", "must be hour, day or week, got %q", name)
	}
	n, err := queryInt(r, "buckets", 30, 1, engine.MaxTimelineBuckets)
	if err != nil {
		return nil, 0, err
	}
	req := engine.TimelineRequest{Bucket: width, Buckets: n}
	if s := q.Get("since"); s != "" {
		if req.Since, err = time.Parse(time.RFC3339, s); err != nil {
			return nil, 0, invalidf("since", "must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", s)
		}
	}
	t, err := h.opts.Engine.Timeline(r.Context(), req)
	if err != nil {
		return nil, 0, err
	}
	return t, http.StatusOK, nil
}

// statsAnswer is GET /stats: the engine's counts with the storage budget
// they are held against.
type statsAnswer struct {
	*engine.StoreStats
	// StorageBudget is gc.max_bytes, the size quota of the data dir (0:
	// none).
	StorageBudget int64 `json:"storage_budget_bytes"`
}

func (h *Handler) stats(r *http.Request) (any, int, error) {
	st, err := ops.StoreStats(r.Context(), h.opts.Engine)
	if err != nil {
		return nil, 0, err
	}
	return statsAnswer{StoreStats: st, StorageBudget: h.opts.GC.MaxBytes}, http.StatusOK, nil
}
