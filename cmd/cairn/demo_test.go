package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemo runs `cairn demo`, the README's main command, in-process: it
// stores notes and finds them again.
func TestDemo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if err := run(context.Background(), e, []string{"demo"}); err != nil {
		t.Fatalf("demo: %v\nstderr:\n%s", err, errb.String())
	}
	for _, want := range []string{"created=false", "**journaling**", "**schema**", "project:cairn:decisions",
		"the best match shares no word with the query:\n   #1 score"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
