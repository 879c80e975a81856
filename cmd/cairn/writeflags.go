package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairn-dev/cairn/engine"
)

// writeFlags are the flags note and post share.
type writeFlags struct {
	project    string
	confidence optFloat
	typ        string
	meta       string
	metaFile   string
	files      stringList
	commits    stringList
	issues     stringList
	prs        stringList
	supersedes int64
}

func (w *writeFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&w.project, "project", "", "the writer's project `ID`")
	fs.Var(&w.confidence, "confidence", "confidence `X` from 0 to 1 (default 0.5)")
	fs.StringVar(&w.typ, "type", "", "message `TYPE`: reflection, decision, pattern, policy, message or your own")
	fs.StringVar(&w.meta, "meta", "", "metadata as a `JSON` object")
	fs.StringVar(&w.metaFile, "meta-file", "", "read the metadata JSON object from `FILE`")
	fs.Var(&w.files, "file", "breadcrumb: a `FILE` the knowledge is about")
	fs.Var(&w.commits, "commit", "breadcrumb: a `COMMIT`")
	fs.Var(&w.issues, "issue", "breadcrumb: an `ISSUE`")
	fs.Var(&w.prs, "pr", "breadcrumb: a pull request `PR`")
	fs.Int64Var(&w.supersedes, "supersedes", 0, "the `ID` of an earlier message this one corrects: it leaves search and recall")
}

// metadata returns the metadata JSON from --meta or --meta-file.
func (w *writeFlags) metadata(c *command) (json.RawMessage, error) {
	if w.meta != "" && w.metaFile != "" {
		return nil, usagef(c.name, "use --meta or --meta-file, not both")
	}
	if w.metaFile != "" {
		b, err := readLimited(w.metaFile, engine.DefaultMaxContentBytes)
		if errors.Is(err, errTooLarge) {
			return nil, &engine.InvalidError{Field: "metadata", Rule: fmt.Sprintf("too large: %s holds more than %d bytes", w.metaFile, engine.DefaultMaxContentBytes)}
		}
		if err != nil {
			return nil, usagef(c.name, "--meta-file: %v", err)
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			return nil, &engine.InvalidError{Field: "metadata", Rule: fmt.Sprintf("must be a JSON object, but %s is empty", w.metaFile)}
		}
		return b, nil
	}
	if w.meta != "" {
		return json.RawMessage(w.meta), nil
	}
	return nil, nil
}

// errTooLarge: a file holds more than readLimited may read.
var errTooLarge = errors.New("too large")

// readLimited reads the file at path, or fails with errTooLarge once it
// holds more than limit bytes (a device such as /dev/zero never ends).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

func (w *writeFlags) breadcrumbs() engine.Breadcrumbs {
	return engine.Breadcrumbs{Files: w.files, Commits: w.commits, Issues: w.issues, PRs: w.prs}
}

func (w *writeFlags) conf() *float64 {
	if !w.confidence.set {
		return nil
	}
	v := w.confidence.v
	return &v
}

// text returns the message text: the positional arguments joined by
// spaces, or all of stdin when there are none.
func (e *env) text(c *command, pos []string) (string, error) {
	if len(pos) > 0 {
		return strings.Join(pos, " "), nil
	}
	if e.stdin == nil || e.isTerminal() {
		return "", usagef(c.name, "TEXT is missing: give it as an argument or on stdin")
	}
	// Read one byte past the engine's limit so the engine reports the size.
	b, err := io.ReadAll(io.LimitReader(e.stdin, engine.DefaultMaxContentBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading TEXT from stdin: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// printWrite prints a write's result.
func (e *env) printWrite(res engine.WriteResult) error {
	if e.json {
		return e.printJSON(res)
	}
	switch {
	case res.Created:
		fmt.Fprintf(e.stdout, "stored message %d in %s\n", res.ID, res.ChannelID)
	case res.NearDuplicate:
		fmt.Fprintf(e.stdout, "message %d in %s says nearly the same (cosine %.2f, same sender): nothing written; to replace it, write again with --supersedes %d\n", res.ID, res.ChannelID, res.Similarity, res.ID)
	default:
		fmt.Fprintf(e.stdout, "message %d already in %s (same content and sender): nothing written\n", res.ID, res.ChannelID)
	}
	return nil
}
