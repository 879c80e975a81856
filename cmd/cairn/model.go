package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// builtinName selects the model compiled into the binary in --model and
// CAIRN_MODEL (so does its own name when no imported model has that name).
const builtinName = "builtin"

// modelUsage is the help of every command's --model flag.
const modelUsage = "embedding `MODEL`: a model directory, a model imported into the data dir, " + builtinName + ", or " + noModelName + " for keyword only (default: $CAIRN_MODEL, else the data dir's imported model, else the built-in one)"

// noModelName in --model and CAIRN_MODEL runs without a model: keyword
// search only, nothing embedded (the messages wait for a process with one).
const noModelName = "none"

func modelCommand() *command {
	return &command{
		name:    "model",
		summary: "manage embedding models (import, list, pull)",
		usage:   "import DIR [--name NAME] | list [--verify] | pull NAME",
		examples: []string{
			`cairn model import ~/Downloads/bge-small-en-v1.5`,
			`cairn model list --json`,
			`cairn model pull BAAI/bge-small-en-v1.5`,
		},
		run: runModel,
	}
}

func runModel(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	name := fs.String("name", "", "import, pull: name of the model in the data dir (default: the directory's or repository's name)")
	verify := fs.Bool("verify", false, "list: re-hash every file against its manifest")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef(c.name, "missing subcommand: import, list or pull")
	}
	dataDir, err := e.resolveDataDir()
	if err != nil {
		return err
	}
	reg := embed.NewRegistry(filepath.Join(dataDir, "models"))
	var man *embed.Manifest
	switch pos[0] {
	case "import":
		if len(pos) != 2 {
			return usagef(c.name, "import takes one model directory")
		}
		bar := e.progress("import")
		man, err = reg.Import(ctx, pos[1], embed.ImportOptions{Name: *name, Progress: bar.file})
		bar.done()
	case "list":
		if len(pos) != 1 {
			return usagef(c.name, "list takes no arguments")
		}
		return listModels(ctx, e, reg, *verify)
	case "pull":
		if len(pos) != 2 {
			return usagef(c.name, "pull takes one Hugging Face model name, e.g. sentence-transformers/all-MiniLM-L6-v2")
		}
		bar := e.progress("pull")
		man, err = reg.Pull(ctx, pos[1], embed.PullOptions{Endpoint: e.getenv("CAIRN_HF_ENDPOINT"), Name: *name, Progress: bar.file})
		bar.done()
		if errors.Is(err, embed.ErrDownload) {
			err = fmt.Errorf("%w\nno network? download the model elsewhere, copy its directory here and run 'cairn model import DIR'", err)
		}
	default:
		return usagef(c.name, "unknown subcommand %q (import, list or pull)", pos[0])
	}
	if errors.Is(err, embed.ErrModelName) {
		return usagef(c.name, "%s", strings.TrimPrefix(err.Error(), "embed: "))
	}
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(man)
	}
	verb := "imported"
	if pos[0] == "pull" {
		verb = "pulled"
	}
	fmt.Fprintf(e.stdout, "%s %s (dim %d, %s) into %s\n", verb, man.Name, man.Dim, man.ModelID, reg.Path(man.Name))
	e.noteStoreVectors(ctx, dataDir, man)
	return nil
}

// noteStoreVectors tells, after an import, what becomes of the messages
// already stored: they are queued for this model's vectors and embedded
// by a process that runs with it. Nothing is said without a store.
func (e *env) noteStoreVectors(ctx context.Context, dataDir string, man *embed.Manifest) {
	if _, err := os.Stat(filepath.Join(dataDir, sqlite.DBFile)); err != nil {
		return
	}
	choice, err := e.resolveModel("")
	if err != nil || choice.dir != filepath.Join(dataDir, "models", man.Name) {
		fmt.Fprintf(e.stderr, "note: this store embeds with another model; use this one with --model %s or CAIRN_MODEL=%s\n", man.Name, man.Name)
		return
	}
	opts, err := e.engineOptions(dataDir)
	if err != nil {
		return
	}
	opts.NoVectorWorker = true
	eng, err := sqlite.OpenEngine(ctx, dataDir, opts, sqlite.Options{})
	if err != nil {
		return
	}
	defer eng.Close()
	b, err := ops.VectorBacklog(ctx, eng, man.ModelID)
	if err != nil || b.Messages == 0 {
		return
	}
	if b.Active != "" && b.Active != man.ModelID {
		fmt.Fprintf(e.stderr, "note: this store's vectors are of %s; semantic search with %s starts once 'cairn rebuild --vectors' re-embeds its %d messages with it (until then searches with it are keyword only)\n", b.Active, man.Name, b.Messages)
		return
	}
	fmt.Fprintf(e.stderr, "note: %d of %d stored messages are queued for vectors of %s; 'cairn serve' and 'cairn mcp' embed them in the background, 'cairn rebuild --vectors' now\n", b.Queued, b.Messages, man.Name)
}

// file is an embed.Progress callback: the bar follows one file at a time.
func (p *progressBar) file(pr embed.Progress) {
	item := pr.Stage + " " + pr.File
	if pr.Total < 0 {
		p.update(engine.Progress{Done: 0, Total: 1, Item: item})
		return
	}
	p.update(engine.Progress{Done: pr.Done, Total: pr.Total, Item: item})
}

// listModels prints the built-in model and the models in the data dir.
func listModels(ctx context.Context, e *env, reg *embed.Registry, verify bool) error {
	bar := e.progress("verify")
	ents, err := reg.List(ctx, embed.ListOptions{Verify: verify, Progress: bar.file})
	bar.done()
	if err != nil {
		return err
	}
	type row struct {
		embed.Manifest
		Dir    string `json:"dir,omitempty"`
		Status string `json:"status"`
	}
	var rows []row
	if b, ok := builtinModel(); ok {
		rows = append(rows, row{Manifest: b, Status: "built-in"})
	}
	for _, en := range ents {
		r := row{Manifest: en.Manifest, Dir: en.Dir, Status: "ok"}
		switch {
		case errors.Is(en.Err, embed.ErrCorruptCopy):
			r.Status = "corrupt: " + strings.TrimPrefix(en.Err.Error(), embed.ErrCorruptCopy.Error()+": ")
		case en.Err != nil:
			r.Status = "no manifest (not imported with cairn model import)"
		}
		rows = append(rows, r)
	}
	if choice, err := e.resolveModel(""); err == nil {
		for i := range rows {
			if rows[i].Dir == choice.dir && !choice.none {
				rows[i].Status += ", default"
			}
		}
	}
	if e.json {
		for _, r := range rows {
			if err := e.printJSON(r); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range rows {
		fmt.Fprintf(e.stdout, "%-28s dim %-5d %s  %s\n", r.Name, r.Dim, r.ModelID, r.Status)
	}
	if len(ents) == 0 {
		fmt.Fprintf(e.stdout, "(no imported models in %s; add one with 'cairn model import DIR')\n", reg.Dir())
	}
	return nil
}

// modelChoice is the embedding model a command uses: a model directory,
// or (dir "") the model built into the binary, or none.
type modelChoice struct {
	dir  string
	none bool
}

// open loads the chosen model.
func (m modelChoice) open(ctx context.Context, opts embed.Options) (*embed.Model, error) {
	if m.none {
		return nil, fmt.Errorf("%w: the model is %q (keyword only)", engine.ErrNoModel, noModelName)
	}
	if m.dir == "" {
		return openBuiltinModel(ctx, opts)
	}
	return embed.Open(ctx, m.dir, opts)
}

// defaultModelName is the model chosen among several imported ones (the
// built-in model's, and Chroma's default model).
const defaultModelName = "all-MiniLM-L6-v2"

// resolveModel chooses the embedding model: --model (a directory, a
// name in DATA_DIR/models, "builtin", or "none" for keyword only), else
// $CAIRN_MODEL (the same),
// else the model imported into DATA_DIR/models (the only one, or
// all-MiniLM-L6-v2 among several), else the built-in model.
func (e *env) resolveModel(flagModel string) (modelChoice, error) {
	dataDir, derr := e.resolveDataDir()
	reg := embed.NewRegistry(filepath.Join(dataDir, "models"))
	named := func(what, v string) (modelChoice, error) {
		switch v {
		case builtinName:
			return modelChoice{}, nil
		case noModelName:
			return modelChoice{none: true}, nil
		}
		if st, err := os.Stat(v); err == nil && st.IsDir() {
			return modelChoice{dir: v}, nil
		}
		if derr == nil && embed.ValidName(v) == nil {
			if st, err := os.Stat(reg.Path(v)); err == nil && st.IsDir() {
				return modelChoice{dir: reg.Path(v)}, nil
			}
		}
		if b, ok := builtinModel(); ok && v == b.Name {
			return modelChoice{}, nil
		}
		return modelChoice{}, fmt.Errorf("%w: %s %q is neither a model directory, nor a model in %s, nor %q or %q", engine.ErrNoModel, what, v, reg.Dir(), builtinName, noModelName)
	}
	if flagModel != "" {
		return named("--model", flagModel)
	}
	if v := e.getenv("CAIRN_MODEL"); v != "" {
		return named("CAIRN_MODEL", v)
	}
	if derr != nil {
		return modelChoice{}, nil
	}
	found, err := reg.Names()
	if err != nil {
		return modelChoice{}, err
	}
	switch {
	case len(found) == 1:
		return modelChoice{dir: reg.Path(found[0])}, nil
	case slices.Contains(found, defaultModelName):
		return modelChoice{dir: reg.Path(defaultModelName)}, nil
	case len(found) > 1:
		return modelChoice{}, fmt.Errorf("%w: %d models in %s (%s): choose one with --model or CAIRN_MODEL", engine.ErrNoModel, len(found), reg.Dir(), strings.Join(found, ", "))
	}
	return modelChoice{}, nil
}
