package main

import (
	"context"
	"errors"
	"log/slog"
	"testing"
)

func TestOpenChromaCollectionsRefusesOtherStores(t *testing.T) {
	for _, dsn := range []string{"sqlite:///tmp/x.db", "/var/lib/cairn", "host=localhost dbname=x"} {
		_, _, err := openChromaCollections(context.Background(), dsn, false, slog.New(slog.DiscardHandler))
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a usage error", dsn, err)
		}
	}
	c, closeFn, err := openChromaCollections(context.Background(), "", false, slog.New(slog.DiscardHandler))
	if err != nil || c != nil {
		t.Fatalf("no store: got %v, %v; want the engine's (nil)", c, err)
	}
	closeFn()
}
