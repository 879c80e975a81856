package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
)

// importMessagesReport is the --json summary of `cairn import messages`.
type importMessagesReport struct {
	*ingest.ImportMessagesReport
	Embedded int64 `json:"embedded"`
}

// importMessagesFlags are the flags of `cairn import messages`.
type importMessagesFlags struct {
	batchSize                      *int
	skipInvalid, noCreate, noEmbed *bool
	model                          *string
}

func declareImportMessagesFlags(fs *flag.FlagSet) importMessagesFlags {
	return importMessagesFlags{
		batchSize:   fs.Int("batch", 1000, "`N` messages per transaction (1 to 10000)"),
		skipInvalid: fs.Bool("skip-invalid", false, "import the valid lines even if some are invalid (default: import nothing then)"),
		noCreate:    fs.Bool("no-create-channels", false, "treat lines naming a plain channel that does not exist as invalid (default: create it)"),
		noEmbed:     fs.Bool("no-embed", false, "do not wait for the embeddings (another cairn process with the model embeds them later)"),
		model:       fs.String("model", "", modelUsage),
	}
}

func runImportMessages(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	flags := declareImportMessagesFlags(fs)
	batchSize, skipInvalid, noCreate, noEmbed, model := flags.batchSize, flags.skipInvalid, flags.noCreate, flags.noEmbed, flags.model
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(c.name, "expected one FILE.jsonl after 'messages'")
	}
	if *batchSize < 1 || *batchSize > engine.MaxBatch {
		return usagef(c.name, "--batch must be from 1 to %d, got %d", engine.MaxBatch, *batchSize)
	}
	path := pos[0]
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return e.withModelEngine(ctx, *model, forSelf, func(eng *engine.Engine) error {
		bar := e.progress("import")
		res, err := ingest.ImportMessages(ctx, eng, f, ingest.ImportMessagesOptions{
			BatchSize: *batchSize, SkipInvalid: *skipInvalid, NoCreateChannels: *noCreate, Progress: bar.update,
		})
		bar.done()
		if res != nil {
			for i, le := range res.Errors {
				if i == 100 {
					fmt.Fprintf(e.stderr, "... and %d more\n", len(res.Errors)-100)
					break
				}
				fmt.Fprintf(e.stderr, "%s:%d: %v\n", path, le.Line, le.Err)
			}
			for _, le := range res.Dropped {
				fmt.Fprintf(e.stderr, "%s:%d: %v\n", path, le.Line, le.Err)
			}
		}
		var ie *engine.InvalidError
		if errors.As(err, &ie) && ie.Field == "lines" {
			return &engine.InvalidError{Field: "file", Rule: fmt.Sprintf("%d of %d lines are invalid (listed above); nothing was imported (use --skip-invalid to import the rest)", res.Invalid, res.Lines)}
		}
		if err != nil {
			return err
		}
		rep := importMessagesReport{ImportMessagesReport: res}
		if !*noEmbed {
			ebar := e.progress("embed")
			err := ops.SyncVectors(ctx, eng, func(p engine.Progress) {
				rep.Embedded = p.Done
				ebar.update(p)
			})
			ebar.done()
			if err != nil {
				return err
			}
		}
		if e.json {
			return e.printJSON(rep)
		}
		fmt.Fprintf(e.stdout, "%d lines: %d imported, %d already stored, %d invalid", rep.Lines, rep.Imported, rep.AlreadyStored, rep.Invalid)
		if rep.LinksRestored > 0 {
			fmt.Fprintf(e.stdout, "; %d supersedes links restored", rep.LinksRestored)
		}
		if rep.LinksDropped > 0 {
			fmt.Fprintf(e.stdout, "; %d supersedes links dropped (listed above)", rep.LinksDropped)
		}
		if len(rep.ChannelsCreated) > 0 {
			fmt.Fprintf(e.stdout, "; created channels %s", strings.Join(rep.ChannelsCreated, ", "))
		}
		if rep.Embedded > 0 {
			fmt.Fprintf(e.stdout, "; %d embedded", rep.Embedded)
		}
		fmt.Fprintln(e.stdout)
		if rep.Invalid > 0 {
			return exitError{code: 1}
		}
		return nil
	})
}
