package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/vecstore"
)

// env is what a command runs with: its streams, environment and the global
// flags. Tests build one with buffers and a fixed clock.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// now is the engine's clock; nil means time.Now.
	now func() time.Time
	// stdinIsTerminal reports whether stdin is interactive; nil means
	// inspect stdin if it is an *os.File.
	stdinIsTerminal func() bool
	// wholeProcess says run is the whole process (main): a command may
	// change process-wide settings such as the collector's.
	wholeProcess bool

	dataDir string
	// store is --store: where messages are kept ("" = config.toml's
	// store, else the data dir); configStore is config.toml's (or
	// CAIRN_STORE's), set by applyConfig.
	store, configStore string
	json               bool
	// readOnly: the running command only reads (command.readOnly).
	readOnly bool
	// pgOptions are config.toml's settings of a PostgreSQL store, set by
	// applyConfig.
	pgOptions postgres.Options
	// dataStore is the data dir's store openEngine opened (nil over
	// PostgreSQL); localVectors is DIR/vectors it opened beside a
	// PostgreSQL store for sqlite.VectorStoreOptions.Open, which
	// closeLocalVectors closes.
	dataStore    *sqlite.Store
	localVectors *vecstore.Store
}

// command is one subcommand.
type command struct {
	name     string
	summary  string
	usage    string // arguments after "cairn NAME"
	examples []string
	// flags declares the command's own flags on fs; the global --data-dir
	// and --json are added by the caller.
	run func(ctx context.Context, e *env, c *command, args []string) error
	// readOnly: the command never writes to the data dir, so it opens the
	// engine with engine.Options.ReadOnly and works on a full disk.
	readOnly bool
	// helpFlags, for a command with several forms, returns the flag sets
	// its help lists, one section each; nil means the one flag set.
	helpFlags func(common *flag.FlagSet) []helpSection
}

// usageError is bad usage: printed with a hint and exit code 2.
type usageError struct {
	cmd string
	msg string
}

func (u *usageError) Error() string { return u.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// errHelp means --help was asked for and printed: exit 0.
var errHelp = errors.New("help printed")

// exitError carries a specific exit code with an already printed message.
type exitError struct{ code int }

func (x exitError) Error() string { return fmt.Sprintf("exit %d", x.code) }

func run(ctx context.Context, e *env, args []string) error {
	if e.getenv == nil {
		e.getenv = func(string) string { return "" }
	}
	global := flag.NewFlagSet("cairn", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	addGlobalFlags(global, e)
	version := global.Bool("version", false, "print the version and exit")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printMainHelp(e.stdout)
			return errHelp
		}
		return usagef("", "%s", flagError(err, global))
	}
	if *version {
		return runVersion(ctx, e, versionCommand(), nil)
	}
	rest := global.Args()
	if len(rest) == 0 {
		return usagef("", "no command given")
	}
	name := rest[0]
	if name == "help" {
		if len(rest) > 1 {
			if c := findCommand(rest[1]); c != nil {
				// The command declares its flags as it runs: --help makes it
				// print its help with all of them and do nothing else.
				return c.run(ctx, e, c, []string{"--help"})
			}
			return usagef("", "unknown command %q%s", rest[1], didYouMean(rest[1], commandNames()))
		}
		printMainHelp(e.stdout)
		return errHelp
	}
	c := findCommand(name)
	if c == nil {
		return usagef("", "unknown command %q%s", name, didYouMean(name, commandNames()))
	}
	e.readOnly = c.readOnly
	return c.run(ctx, e, c, rest[1:])
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func addGlobalFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.dataDir, "data-dir", e.dataDir, "data directory `DIR` (default: $CAIRN_DATA_DIR, else the user data dir + /cairn)")
	fs.StringVar(&e.store, "store", e.store, "where messages are kept: a postgres:// `URL` (default: $CAIRN_STORE, else config.toml's store, else the data dir)")
	fs.BoolVar(&e.json, "json", e.json, "print JSON (one object per line for lists)")
}

// newFlagSet returns c's flag set with the global flags.
func newFlagSet(e *env, c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addGlobalFlags(fs, e)
	return fs
}

// parse parses args into fs, allowing flags and positional arguments in any
// order; everything after a "--" argument is positional. It prints help and
// returns errHelp for -h/--help.
func parse(e *env, c *command, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos, tail []string
	for i, a := range args {
		if a == "--" {
			tail = args[i+1:]
			args = args[:i]
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printCommandHelp(e.stdout, c, fs)
				return nil, errHelp
			}
			return nil, usagef(c.name, "%s", flagError(err, fs))
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return append(pos, tail...), nil
}

// doubleDash rewrites the flag package's "-name" in its error messages to
// the "--name" form the help shows.
func doubleDash(msg string) string {
	for _, p := range []string{"flag: -", "defined: -", "flag -"} {
		msg = strings.Replace(msg, p, p+"-", 1)
	}
	return msg
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// optFloat is a float flag that remembers whether it was set.
type optFloat struct {
	v   float64
	set bool
}

func (o *optFloat) String() string {
	if !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %q", s)
	}
	o.v, o.set = f, true
	return nil
}

func printMainHelp(w io.Writer) {
	fmt.Fprint(w, `cairn: a local knowledge store for AI agents. Agents write notes and messages;
cairn keeps them in one data dir and finds them again by keyword and by meaning.

Usage:
  cairn [--data-dir DIR] [--json] COMMAND [flags] [args]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Global flags (before or after the command):
  --data-dir DIR   data directory (default: $CAIRN_DATA_DIR, else the user data dir + /cairn)
  --json           print JSON (one object per line for lists)
  --version        print the version (as 'cairn version')

Examples:
  cairn note --agent claude --project cairn "SQLite WAL needs busy_timeout for concurrent writers"
  cairn search --limit 5 "busy timeout" --json
  cairn show 1

Run 'cairn COMMAND --help' for a command's flags and examples.
Exit codes: 0 ok, 1 failure, 2 bad input or usage, 130 interrupted.
`)
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "cairn %s: %s\n\nUsage:\n  cairn %s %s\n", c.name, c.summary, c.name, c.usage)
	if c.helpFlags == nil {
		fmt.Fprint(w, "\nFlags:\n")
		printFlags(w, fs)
	} else {
		for _, sec := range c.helpFlags(fs) {
			fmt.Fprintf(w, "\nFlags of %s:\n", sec.title)
			printFlags(w, sec.fs)
		}
	}
	if len(c.examples) > 0 {
		fmt.Fprint(w, "\nExamples:\n")
		for _, ex := range c.examples {
			fmt.Fprintf(w, "  %s\n", ex)
		}
	}
}

// helpSection is one titled flag set of a command with several forms.
type helpSection struct {
	title string
	fs    *flag.FlagSet
}

// printFlags lists every flag of fs, sorted, with its default when it has
// one that the text does not already give.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	type row struct{ name, text string }
	var rows []row
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if typ != "" {
			name += " " + typ
		}
		if _, ok := f.Value.(*stringList); ok && !strings.Contains(usage, "repeatable") {
			usage += " (repeatable)"
		}
		if d := f.DefValue; d != "" && d != "0" && d != "false" && !strings.Contains(usage, "default") {
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{name, usage})
	})
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	for _, r := range rows {
		fmt.Fprintf(w, "  %-24s %s\n", r.name, r.text)
	}
}

// flagError is the flag package's parse error in the --name form the help
// shows, with the nearest defined flag for an unknown one.
func flagError(err error, fs *flag.FlagSet) string {
	msg := doubleDash(err.Error())
	const unknown = "flag provided but not defined: --"
	if name, ok := strings.CutPrefix(msg, unknown); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := nearest(strings.TrimLeft(name, "-"), names); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	return msg
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// didYouMean is " (did you mean X?)" for the candidate nearest to name, or
// "" when none is near.
func didYouMean(name string, candidates []string) string {
	if s := nearest(name, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

// nearest returns the candidate with the smallest edit distance to name
// (transpositions count as one edit), if it is at most a third of name's
// length (at least 1, at most 3) or the candidate starts with name; ""
// otherwise.
func nearest(name string, candidates []string) string {
	best, bestD := "", 0
	limit := min(max(len(name)/3, 1), 3)
	for _, c := range candidates {
		d := editDistance(name, c)
		if len(name) >= 3 && strings.HasPrefix(c, name) {
			d = min(d, limit)
		}
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions and adjacent transpositions).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// exitCodes is the CLI's one mapping of the engine's error classes
// (engine.ErrorClasses) to exit codes, most specific first: 2 for what the
// user's input or flags can fix, 1 for the store's state, 130 for an
// interrupt. Bad input (*engine.InvalidError) and usage errors exit 2
// (report); everything else 1.
func exitCodes() []struct {
	class error
	code  int
} {
	return []struct {
		class error
		code  int
	}{
		{engine.ErrNotFound, 2},
		{engine.ErrExists, 2},
		{engine.ErrNoModel, 2},
		{engine.ErrEmbedderMismatch, 1},
		{engine.ErrDimensionMismatch, 1},
		{engine.ErrClosed, 1},
		{engine.ErrCorrupt, 1},
		{engine.ErrIncompatibleFormat, 1},
		{engine.ErrDiskFull, 1},
		{context.Canceled, 130},
	}
}

// report prints err (if any) to stderr and returns the exit code. The
// message is the error's own text, chain and class words kept.
func report(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return 0
	}
	var x exitError
	if errors.As(err, &x) {
		return x.code
	}
	var u *usageError
	var inv *engine.InvalidError
	switch {
	case errors.As(err, &u):
		if u.cmd != "" {
			fmt.Fprintf(stderr, "cairn %s: %s\nRun 'cairn %s --help' for usage.\n", u.cmd, u.msg, u.cmd)
		} else {
			fmt.Fprintf(stderr, "cairn: %s\nRun 'cairn --help' for usage.\n", u.msg)
		}
		return 2
	case errors.As(err, &inv):
		fmt.Fprintf(stderr, "cairn: %s\n", userMessage(err))
		return 2
	case errors.Is(err, engine.ErrDiskFull):
		// The class's own words: the chain names files by absolute path.
		fmt.Fprintf(stderr, "cairn: the disk is full (%s); free some space and try again\n", strings.TrimPrefix(engine.ErrDiskFull.Error(), "engine: "))
		return 1
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "cairn: interrupted")
		return 130
	}
	fmt.Fprintf(stderr, "cairn: %s\n", userMessage(err))
	for _, c := range exitCodes() {
		if errors.Is(err, c.class) {
			return c.code
		}
	}
	return 1
}

// userMessage is err's text without the "engine: " prefixes the engine's
// errors carry for the engine's own callers (a user reads "cairn: data dir
// ... is not writable", not "cairn: engine: data dir ...").
func userMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "engine: ")
	return strings.ReplaceAll(msg, ": engine: ", ": ")
}

// resolveDataDir applies --data-dir, then CAIRN_DATA_DIR, then the default.
func (e *env) resolveDataDir() (string, error) {
	if e.dataDir != "" {
		return e.dataDir, nil
	}
	if d := e.getenv("CAIRN_DATA_DIR"); d != "" {
		return d, nil
	}
	base, err := userDataDir(e.getenv, runtime.GOOS)
	if err != nil {
		return "", fmt.Errorf("no data dir: set --data-dir or CAIRN_DATA_DIR (%w)", err)
	}
	return filepath.Join(base, "cairn"), nil
}

// userDataDir is the platform's per-user data directory.
func userDataDir(getenv func(string) string, goos string) (string, error) {
	switch goos {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Application Support"), nil
		}
		return "", errors.New("$HOME is not set")
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib"), nil
		}
		return "", errors.New("$home is not set")
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share"), nil
	}
	return "", errors.New("neither $XDG_DATA_HOME nor $HOME is set")
}

// open opens the engine on the resolved data dir.
func (e *env) open(ctx context.Context) (*engine.Engine, error) {
	dir, err := e.resolveDataDir()
	if err != nil {
		return nil, err
	}
	opts, err := e.engineOptions(dir)
	if err != nil {
		return nil, err
	}
	return e.openEngine(ctx, dir, opts, sqlite.VectorStoreOptions{})
}

// leftover says on stderr that a killed backup's or restore's temporary
// was removed (it may have held a plaintext copy of the data).
func (e *env) leftover(path string) {
	fmt.Fprintf(e.stderr, "cairn: removed %s, left by a killed backup or restore\n", path)
}

// engineOptions are the engine options of data dir dir: the clock and what
// config.toml and CAIRN_* say (redaction).
func (e *env) engineOptions(dir string) (engine.Options, error) {
	// A data dir that cannot be one is reported as such, before the
	// config file inside it is looked for.
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return engine.Options{}, fmt.Errorf("data dir %s is not a directory", dir)
	}
	opts := engine.Options{Now: e.now, ReadOnly: e.readOnly}
	if err := e.applyConfig(dir, &opts); err != nil { // config.toml and CAIRN_*: redaction
		return opts, err
	}
	return opts, nil
}

// withEngine opens the engine, runs f and closes it.
func (e *env) withEngine(ctx context.Context, f func(*engine.Engine) error) error {
	eng, err := e.open(ctx)
	if err != nil {
		return err
	}
	err = f(eng)
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	return err
}

// printJSON writes v as one line of JSON.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether stdin is interactive.
func (e *env) isTerminal() bool {
	if e.stdinIsTerminal != nil {
		return e.stdinIsTerminal()
	}
	f, ok := e.stdin.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// noArgs rejects positional arguments.
func noArgs(c *command, pos []string) error {
	if len(pos) > 0 {
		return usagef(c.name, "unexpected argument %q", pos[0])
	}
	return nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}
