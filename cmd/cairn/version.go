package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/cairn-dev/cairn/engine"
)

func versionCommand() *command {
	return &command{
		name:     "version",
		summary:  "print cairn's version and database format",
		usage:    "[--json]",
		examples: []string{`cairn version`, `cairn version --json`},
		run:      runVersion,
	}
}

// buildVersion is the module version of this build, "(devel)" when built
// from a work tree.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func runVersion(_ context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	v := struct {
		Version  string `json:"version"`
		Go       string `json:"go"`
		Platform string `json:"platform"`
		DBFormat int    `json:"db_format"`
	}{buildVersion(), runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH, engine.FormatVersion()}
	if e.json {
		return e.printJSON(v)
	}
	fmt.Fprintf(e.stdout, "cairn %s (%s, %s), database format %d\n", v.Version, v.Go, v.Platform, v.DBFormat)
	return nil
}
