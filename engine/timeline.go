package engine

import (
	"context"
	"slices"
	"time"
)

// MaxTimelineBuckets bounds the buckets of one timeline.
const MaxTimelineBuckets = 1000

// TimelineRequest asks for message counts over time.
type TimelineRequest struct {
	// Since is the start of the first bucket, rounded down to a whole
	// bucket (UTC); the zero time means Buckets buckets back from now.
	Since time.Time
	// Bucket is the width of a bucket: from a minute to 31 days.
	Bucket time.Duration
	// Buckets is how many buckets from Since (1 to MaxTimelineBuckets).
	Buckets int
}

// Timeline is the number of messages written per bucket of time and per
// channel type (agent-notes, project, channel), by the messages' own
// created_at.
type Timeline struct {
	Start  time.Time `json:"start"`
	Bucket string    `json:"bucket"` // Go duration text, e.g. "24h0m0s"
	// BucketSeconds is Bucket in seconds.
	BucketSeconds int64 `json:"bucket_seconds"`
	// Series has one entry per channel type that has messages in the
	// range, in name order, each with one count per bucket.
	Series []TimelineSeries `json:"series"`
}

// TimelineSeries is one channel type's counts, one per bucket.
type TimelineSeries struct {
	ChannelType string  `json:"channel_type"`
	Counts      []int64 `json:"counts"`
}

// Timeline counts messages per bucket and channel type. It reads only.
func (e *Engine) Timeline(ctx context.Context, req TimelineRequest) (Timeline, error) {
	if req.Bucket < time.Minute || req.Bucket > 31*24*time.Hour {
		return Timeline{}, invalid("bucket", "must be from 1 minute to 31 days, got %s", req.Bucket)
	}
	if req.Buckets < 1 || req.Buckets > MaxTimelineBuckets {
		return Timeline{}, invalid("buckets", "must be from 1 to %d, got %d", MaxTimelineBuckets, req.Buckets)
	}
	width := req.Bucket.Milliseconds()
	since := req.Since
	if since.IsZero() {
		since = e.opts.Now().Add(-time.Duration(req.Buckets-1) * req.Bucket)
	}
	start := since.UnixMilli() / width * width
	end := start + int64(req.Buckets)*width
	counts, err := e.timelineCounts(ctx, start, width, end)
	if err != nil {
		return Timeline{}, err
	}
	byType := map[string][]int64{}
	for _, c := range counts {
		if c.Bucket < 0 || c.Bucket >= int64(req.Buckets) {
			continue
		}
		if byType[c.ChannelType] == nil {
			byType[c.ChannelType] = make([]int64, req.Buckets)
		}
		byType[c.ChannelType][c.Bucket] += c.Count
	}
	t := Timeline{Start: fromMillis(start), Bucket: req.Bucket.String(), BucketSeconds: width / 1000, Series: []TimelineSeries{}}
	for typ, counts := range byType {
		t.Series = append(t.Series, TimelineSeries{ChannelType: typ, Counts: counts})
	}
	slices.SortFunc(t.Series, func(a, b TimelineSeries) int {
		if a.ChannelType < b.ChannelType {
			return -1
		}
		return 1
	})
	return t, nil
}

// timelineCounts counts the messages created in [start, end) per channel
// type and bucket.
func (e *Engine) timelineCounts(ctx context.Context, start, width, end int64) ([]TimelineCount, error) {
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	return e.store.TimelineCounts(ctx, start, width, end)
}
