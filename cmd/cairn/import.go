package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
)

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "import Claude Code sessions, or messages from JSONL (idempotent; re-runs add only what is new)",
		usage:   "claude-code [DIR] [--exclude GLOB]... [--no-redact] [--json]  |  messages FILE.jsonl [--batch N] [--skip-invalid] [--no-create-channels] [--no-embed] [--model DIR] [--json]",
		examples: []string{
			`cairn import claude-code`,
			`cairn import claude-code ~/.claude/projects --exclude '-home-me-secret*'`,
			`cairn import claude-code session.jsonl --json`,
			`cairn import messages notes.jsonl     # one {"channel","sender","content",...} per line`,
		},
		run: runImport,
		helpFlags: func(*flag.FlagSet) []helpSection {
			cc, msgs := newHelpFlagSet("import claude-code"), newHelpFlagSet("import messages")
			declareImportCCFlags(cc)
			declareImportMessagesFlags(msgs)
			return []helpSection{{"import claude-code", cc}, {"import messages", msgs}}
		},
	}
}

// newHelpFlagSet is a flag set with the global flags, for help only.
func newHelpFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	addGlobalFlags(fs, &env{})
	return fs
}

// importCCFlags are the flags of `cairn import claude-code`.
type importCCFlags struct {
	exclude  stringList
	noRedact *bool
}

func declareImportCCFlags(fs *flag.FlagSet) *importCCFlags {
	f := &importCCFlags{}
	fs.Var(&f.exclude, "exclude", "never store sessions matching `GLOB` (repeatable; adds to import.exclude)")
	f.noRedact = fs.Bool("no-redact", false, "store text without redaction (overrides redaction.enabled)")
	return f
}

func runImport(ctx context.Context, e *env, c *command, args []string) error {
	if len(args) > 0 && args[0] == "messages" {
		return runImportMessages(ctx, e, c, args[1:])
	}
	fs := newFlagSet(e, c)
	flags := declareImportCCFlags(fs)
	exclude, noRedact := &flags.exclude, flags.noRedact
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef(c.name, "expected a source: claude-code")
	}
	if pos[0] != "claude-code" {
		return usagef(c.name, "unknown source %q: expected claude-code", pos[0])
	}
	if len(pos) > 2 {
		return usagef(c.name, "unexpected argument %q", pos[2])
	}
	root := ""
	if len(pos) == 2 {
		root = pos[1]
	}
	cfg, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	cfg.Import.Exclude = append(cfg.Import.Exclude, *exclude...)
	if *noRedact {
		cfg.Redaction.Enabled = false
	}
	if err := cfg.Validate(); err != nil {
		return usagef(c.name, "%v", err)
	}
	opts, err := cfg.ImportOptions(root, e.getenv)
	if err != nil {
		return err
	}
	bar := e.progress("import")
	opts.Progress = bar.update
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		rep, err := ingest.ImportSessions(ctx, eng, opts)
		bar.done()
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(rep)
		}
		w := e.stdout
		fmt.Fprintf(w, "%d files (%d excluded, %d failed): %d records added, %d already stored, %d lines skipped\n",
			len(rep.Files), rep.FilesExcluded, rep.FilesFailed, rep.Added, rep.Known, rep.Skipped)
		fmt.Fprintf(w, "contents: %d new, %d shared with earlier records; %d searchable chunks\n", rep.ContentsNew, rep.ContentsShared, rep.Chunks)
		if len(rep.Redactions) > 0 {
			fmt.Fprintf(w, "redacted: %s\n", countsString(rep.Redactions))
		}
		for _, f := range rep.Files {
			if f.Error != "" {
				fmt.Fprintf(w, "  %s: FAILED, nothing imported: %s\n", f.Path, f.Error)
				continue
			}
			if len(f.Skipped) == 0 {
				continue
			}
			parts := make([]string, 0, len(f.Skipped))
			for r, n := range f.Skipped {
				parts = append(parts, fmt.Sprintf("%s=%d", r, n))
			}
			sort.Strings(parts)
			fmt.Fprintf(w, "  %s: skipped %s\n", f.Path, strings.Join(parts, " "))
			for _, s := range f.Samples {
				fmt.Fprintf(w, "    line %d: %s %s\n", s.Line, s.Reason, s.Detail)
			}
		}
		if rep.FilesFailed > 0 {
			return fmt.Errorf("%d files could not be imported (rolled back; see above)", rep.FilesFailed)
		}
		return nil
	})
}

func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
