package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/cmd/cairn/config"
	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/pelletier/go-toml/v2"
)

func configCommand() *command {
	return &command{
		name:    "config",
		summary: "show the effective configuration (file, CAIRN_* environment, defaults)",
		usage:   "show [--defaults] | path | env",
		examples: []string{
			`cairn config show`,
			`cairn config show --defaults > ~/.local/share/cairn/config.toml`,
			`cairn config env`,
		},
		run: runConfig,
	}
}

// loadConfig reads the configuration of the resolved data dir.
func (e *env) loadConfig() (config.Config, string, error) {
	dir, err := e.resolveDataDir()
	if err != nil {
		return config.Config{}, "", err
	}
	path := config.Path(dir, e.getenv)
	cfg, err := config.Load(path, e.getenv)
	if err != nil {
		return cfg, path, usagef("config", "%v", err)
	}
	return cfg, path, nil
}

func runConfig(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	defaults := fs.Bool("defaults", false, "show the built-in defaults instead of the effective configuration")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(c.name, "expected show, path or env")
	}
	switch pos[0] {
	case "show":
		cfg := config.Default()
		path := ""
		if !*defaults {
			if cfg, path, err = e.loadConfig(); err != nil {
				return err
			}
		}
		if cfg.Store != "" {
			cfg.Store = postgres.Redact(cfg.Store) // a password stays in the file
		}
		b, err := config.Encode(cfg)
		if err != nil {
			return err
		}
		if e.json {
			// The file's own keys (snake_case), as every JSON output.
			var m map[string]any
			if err := toml.Unmarshal(b, &m); err != nil {
				return err
			}
			return e.printJSON(map[string]any{"path": path, "config": m})
		}
		if path != "" {
			fmt.Fprintf(e.stdout, "# file: %s\n", path)
		}
		_, err = e.stdout.Write(b)
		return err
	case "path":
		dir, err := e.resolveDataDir()
		if err != nil {
			return err
		}
		p := config.Path(dir, e.getenv)
		if e.json {
			return e.printJSON(map[string]string{"path": p})
		}
		fmt.Fprintln(e.stdout, p)
		return nil
	case "env":
		for _, v := range config.EnvVars() {
			if e.json {
				if err := e.printJSON(map[string]string{"name": v, "value": e.getenv(v)}); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(e.stdout, "%s=%s\n", v, e.getenv(v))
		}
		return nil
	}
	return usagef(c.name, "unknown action %q: expected show, path or env", pos[0])
}

// applyConfig sets the engine options the configuration of data dir dir
// controls (today: the redactor applied to every stored message).
func (e *env) applyConfig(dir string, opts *engine.Options) error {
	cfg, err := config.Load(config.Path(dir, e.getenv), e.getenv)
	if err != nil {
		return usagef("config", "%v", err)
	}
	red, err := cfg.Redactor()
	if err != nil {
		return usagef("config", "%v", err)
	}
	opts.Redactor = red
	opts.NearDuplicateCosine = cfg.Write.NearDuplicateCosine
	if ce := cfg.ContinuousExport(dir); ce.OutDir != "" {
		ce.OnError = func(err error) {
			fmt.Fprintf(e.stderr, "cairn: warning: continuous export: %v\n", err)
		}
		opts.Observer = ops.NewExporter(ce) // every surface: CLI, serve, mcp
	}
	e.configStore = cfg.Store
	e.pgOptions = postgres.Options{EfSearch: cfg.Postgres.EfSearch}
	opts.BreadcrumbRepos = gitcrumbs.Repos{}
	if hf := findBreadcrumbRepo(cfg.Breadcrumbs.Repo); hf != nil {
		opts.BreadcrumbRepo = hf.Root()
	}
	return nil
}
