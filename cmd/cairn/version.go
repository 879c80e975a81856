package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/cairn-dev/cairn/engine/sqlite"
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

// linkedVersion is the version `make build` and `make dist` stamp in with
// -ldflags "-X main.linkedVersion=..." (git describe); "" in a plain go
// build, where the module's build information answers instead.
var linkedVersion string

// buildInfo is what the binary knows of its own build.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
}

// buildVersion is this build's version (readBuildInfo's Version).
func buildVersion() string { return readBuildInfo().Version }

func readBuildInfo() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(linkedVersion, bi)
}

// versionOf is the version of a build: the linked-in stamp; else the
// module version (a release tag, or the pseudo-version `go install
// module@version` and VCS-stamped builds get); else "devel" with the VCS
// revision and time the go command stamps from a git checkout; else
// "(devel)", for a build with no VCS information (-buildvcs=false).
func versionOf(linked string, bi *debug.BuildInfo) buildInfo {
	var out buildInfo
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				out.Commit = s.Value
			case "vcs.time":
				out.CommitTime = s.Value
			case "vcs.modified":
				out.Modified = s.Value == "true"
			}
		}
	}
	switch {
	case linked != "":
		out.Version = linked
	case bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		out.Version = bi.Main.Version
	case out.Commit != "":
		out.Version = "devel-" + out.Commit[:min(12, len(out.Commit))]
		if out.Modified {
			out.Version += "-dirty"
		}
	default:
		out.Version = "(devel)"
	}
	return out
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
		buildInfo
		Go       string `json:"go"`
		Platform string `json:"platform"`
		DBFormat int    `json:"db_format"`
	}{readBuildInfo(), runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH, sqlite.FormatVersion()}
	if e.json {
		return e.printJSON(v)
	}
	fmt.Fprintf(e.stdout, "cairn %s (%s, %s), database format %d\n", v.Version, v.Go, v.Platform, v.DBFormat)
	if v.Commit != "" {
		fmt.Fprintf(e.stdout, "commit %s (%s)", v.Commit, v.CommitTime)
		if v.Modified {
			fmt.Fprint(e.stdout, ", with uncommitted changes")
		}
		fmt.Fprintln(e.stdout)
	}
	return nil
}
