// Package config loads cairn's configuration file, DIR/config.toml (or the
// file $CAIRN_CONFIG names), and turns it into engine options.
//
// Precedence, lowest first: built-in defaults (Default), the TOML file,
// CAIRN_* environment variables, then command-line flags (applied by each
// command on the Config it gets). `cairn config show` prints the effective
// configuration, with every key documented; `cairn config show --defaults`
// prints the defaults.
//
// Environment variables: every scalar or list key has one, named CAIRN_ +
// SECTION + _ + KEY in upper case (CAIRN_IMPORT_CLAUDE_CODE_DIR,
// CAIRN_REDACTION_ENABLE, CAIRN_RETENTION_SESSION_MAX_AGE, ...); lists are
// comma-separated. Retention policies and custom redaction rules (arrays of
// tables) are set in the file only.
//
// Durations are Go durations ("36h", "90m") or whole days ("90d"); "0" or
// "" means off.
//
// TOML library: github.com/pelletier/go-toml/v2, chosen over
// BurntSushi/toml because its decoder rejects unknown keys with their line
// and column (DisallowUnknownFields), so a misspelt retention key is an
// error rather than a silently kept default, and its encoder writes the
// documented defaults with comments from struct tags, which `config show`
// relies on.
//
// The package holds no state; a Config is a plain value. It imports engine
// (and engine/redact) only.
package config
