package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

func TestNeighbours(t *testing.T) {
	e, _ := enginetest.Open(t, engine.Options{})
	ctx := context.Background()
	var team []int64
	for i, text := range []string{"one", "two", "three", "four", "five"} {
		team = append(team, enginetest.MustStore(t, e, engine.NewMessage{Channel: "team-log", Sender: "bob", Content: text}))
		if i == 2 {
			enginetest.MustStore(t, e, engine.NewMessage{Channel: "other", Sender: "bob", Content: "elsewhere"})
		}
	}
	n, err := e.Neighbours(ctx, team[2], 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if n.ChannelID != "team-log" || !slices.Equal(enginetest.IDs(n.Before), team[1:2]) || !slices.Equal(enginetest.IDs(n.After), team[3:]) || !n.MoreBefore || n.MoreAfter {
		t.Errorf("neighbours of the middle one = %+v", n)
	}
	n, err = e.Neighbours(ctx, team[0], 3, 0)
	if err != nil || len(n.Before) != 0 || len(n.After) != 0 || n.MoreBefore || !n.MoreAfter {
		t.Errorf("neighbours of the first, none after = %+v, %v", n, err)
	}
	if _, err := e.Neighbours(ctx, 999, 1, 1); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	var inv *engine.InvalidError
	if _, err := e.Neighbours(ctx, team[0], engine.MaxNeighbours+1, 1); !errors.As(err, &inv) || inv.Field != "before" {
		t.Errorf("too many before: %v", err)
	}
}
