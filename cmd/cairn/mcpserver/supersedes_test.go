package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// TestSupersedesOverMCP: store_message takes supersedes; a missing id is a
// tool error naming it; get_message on the original names the correction.
func TestSupersedesOverMCP(t *testing.T) {
	ctx := context.Background()
	eng, err := sqlite.OpenEngine(ctx, t.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	cs, _ := connect(t, func(context.Context) (*engine.Engine, error) { return eng, nil })
	msg := func(content string, supersedes float64) map[string]any {
		return map[string]any{"channel": "project:web:decisions", "sender": "bob", "content": content, "supersedes": supersedes}
	}
	res, _ := call(t, cs, "store_message", msg("deploys go out on Fridays", 777))
	if !res.IsError || !strings.Contains(errText(res), "supersedes") {
		t.Fatalf("missing supersedes: %v %s", res.IsError, errText(res))
	}
	res, first := call(t, cs, "store_message", msg("deploys go out on Fridays", 0))
	if res.IsError {
		t.Fatal(errText(res))
	}
	res, fix := call(t, cs, "store_message", msg("deploys go out on Tuesdays", first["id"].(float64)))
	if res.IsError {
		t.Fatal(errText(res))
	}
	res, got := call(t, cs, "get_message", map[string]any{"id": first["id"]})
	if res.IsError || got["superseded_by"] != fix["id"] {
		t.Fatalf("get_message of the original: %v", got)
	}
}
