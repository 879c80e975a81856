package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestFaultMetadataIsRedacted: with a Redactor, secrets in metadata values
// (nested too) and in breadcrumbs are redacted like the content, counted
// in WriteResult.Redactions, and never stored in clear; the caller's
// breadcrumbs are not modified.
func TestFaultMetadataIsRedacted(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{Redactor: enginetest.DefaultRedactor(t)})
	aws := "AKIA" + "IOSFODNN7EXAMPLE"
	gh := "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	bc := engine.Breadcrumbs{Files: []string{"notes/" + gh + ".txt", "main.go"}, Other: map[string][]string{"logs": {"deploy.log " + aws}}}
	res, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "keys rotated",
		Metadata:    json.RawMessage(`{"aws":"` + aws + `","nested":{"list":["x","token ` + gh + `"]},"n":3,"breadcrumbs":{"external_refs":["https://ci.example/run?key=` + aws + `"]}}`),
		Breadcrumbs: bc})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.GetMessage(ctx, res.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored := string(m.Metadata)
	if strings.Contains(stored, aws) || strings.Contains(stored, gh) {
		t.Fatalf("metadata stored a secret in clear: %s", stored)
	}
	if !strings.Contains(stored, "[REDACTED:") || !strings.Contains(stored, `"n":3`) || !strings.Contains(stored, "main.go") {
		t.Errorf("metadata after redaction: %s", stored)
	}
	if res.Redactions == "" {
		t.Errorf("no redactions reported for metadata secrets")
	}
	if bc.Files[0] != "notes/"+gh+".txt" || bc.Other["logs"][0] != "deploy.log "+aws {
		t.Errorf("the caller's breadcrumbs were modified: %+v", bc)
	}
}

// TestFaultBreadcrumbsBounded: breadcrumbs count toward the metadata cap
// (MaxContentBytes), and merging many of them is linear, not quadratic.
func TestFaultBreadcrumbsBounded(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	files := make([]string, 300_000)
	for i := range files {
		files[i] = fmt.Sprintf("src/pkg%06d/file.go", i)
	}
	// 300,000 distinct names: about 7 MB, far over the 1 MiB cap. With a
	// quadratic merge this alone takes minutes.
	_, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "big change", Breadcrumbs: engine.Breadcrumbs{Files: files}})
	var inv *engine.InvalidError
	if !errors.As(err, &inv) || inv.Field != "metadata" {
		t.Fatalf("7 MB of breadcrumbs: %v, want invalid metadata", err)
	}
	// Many duplicates collapse to few names and fit.
	dups := make([]string, 300_000)
	for i := range dups {
		dups[i] = fmt.Sprintf("src/f%d.go", i%100)
	}
	res, err := e.WriteNote(ctx, engine.NewNote{Agent: "a", Content: "many dups", Breadcrumbs: engine.Breadcrumbs{Files: dups}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.GetMessage(ctx, res.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Breadcrumbs().Files); got != 100 {
		t.Errorf("%d distinct files stored, want 100", got)
	}
}
