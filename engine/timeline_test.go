package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

func TestTimeline(t *testing.T) {
	e, clock := enginetest.Open(t, engine.Options{})
	ctx := context.Background()
	day := 24 * time.Hour
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clock.Set(start.Add(10 * day))
	at := func(d int, channel string) {
		enginetest.MustStore(t, e, engine.NewMessage{Channel: channel, Sender: "bob", Content: fmt.Sprintf("%s on day %d", channel, d),
			CreatedAt: start.Add(time.Duration(d)*day + time.Hour)})
	}
	at(0, "team-log")
	at(0, "agent-notes:bob")
	at(2, "team-log")
	at(2, "project:cairn")
	at(9, "team-log") // past the range asked for
	clock.Set(start.Add(3*day + 5*time.Hour))
	tl, err := e.Timeline(ctx, engine.TimelineRequest{Bucket: day, Buckets: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !tl.Start.Equal(start.Add(day)) || tl.BucketSeconds != 86400 {
		t.Errorf("start %v bucket %d, want %v and a day", tl.Start, tl.BucketSeconds, start.Add(day))
	}
	got := map[string][]int64{}
	for _, s := range tl.Series {
		got[s.ChannelType] = s.Counts
	}
	if len(got) != 2 || !slices.Equal(got["channel"], []int64{0, 1, 0}) || !slices.Equal(got["project"], []int64{0, 1, 0}) {
		t.Errorf("last three days = %+v", tl.Series)
	}
	tl, err = e.Timeline(ctx, engine.TimelineRequest{Since: start.Add(30 * time.Minute), Bucket: day, Buckets: 10})
	if err != nil {
		t.Fatal(err)
	}
	got = map[string][]int64{}
	for _, s := range tl.Series {
		got[s.ChannelType] = s.Counts
	}
	if !slices.Equal(got["channel"], []int64{1, 0, 1, 0, 0, 0, 0, 0, 0, 1}) || !slices.Equal(got["agent-notes"], []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("ten days from the start = %+v", tl.Series)
	}
	var inv *engine.InvalidError
	if _, err := e.Timeline(ctx, engine.TimelineRequest{Bucket: time.Second, Buckets: 3}); !errors.As(err, &inv) || inv.Field != "bucket" {
		t.Errorf("a one-second bucket: %v", err)
	}
	if _, err := e.Timeline(ctx, engine.TimelineRequest{Bucket: day, Buckets: 0}); !errors.As(err, &inv) || inv.Field != "buckets" {
		t.Errorf("no buckets: %v", err)
	}
}
