package agentsetup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// PluginName is the Claude Code plugin's name (kebab-case, as plugin.json
// requires).
const PluginName = "cairn"

// PluginFile is one file of the Claude Code plugin, its path relative to
// the plugin's directory.
type PluginFile struct {
	Path string
	Data []byte
}

// semver is the version form plugin.json takes.
var semver = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// ClaudePlugin returns the files of a Claude Code plugin carrying what
// setup installs into the user's files: the MCP server (.mcp.json at the
// plugin root), the hooks (hooks/hooks.json, the settings' hooks format)
// and the memory instruction, which a plugin cannot put into CLAUDE.md:
// its session-start hook prints it (cairn hook --instruction). The layout
// is the one Claude Code documents: .claude-plugin/plugin.json holds the
// manifest, components sit at the plugin root. version is given when it
// is a semantic version.
func ClaudePlugin(o Options, version string) ([]PluginFile, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	manifest := newObject()
	manifest.set("name", PluginName)
	if semver.MatchString(version) {
		manifest.set("version", version)
	}
	manifest.set("description", "cairn: a shared long-term memory for agents. Recalls the project's memory at session start and on every prompt (within a token budget), and serves it over MCP.")
	manifest.set("homepage", "https://github.com/cairn-dev/cairn")
	server := newObject()
	server.set("command", o.Binary)
	server.set("args", []any{"mcp", "--data-dir", o.DataDir})
	servers := newObject()
	servers.set(ServerName, server)
	hooks := newObject()
	cmd := shellQuote(o.Binary) + " hook " + ClaudeCode + " --data-dir " + shellQuote(o.DataDir)
	for _, ev := range claudeEvents(cmd, " --instruction") {
		grp := newObject()
		grp.set("hooks", []any{ev.entry})
		hooks.set(ev.name, []any{grp})
	}
	hooksDoc := newObject()
	hooksDoc.set("description", "cairn recall (session start, every prompt) and capture (session end, before compaction; opt-in in cairn's config.toml)")
	hooksDoc.set("hooks", hooks)
	return []PluginFile{
		{Path: filepath.Join(".claude-plugin", "plugin.json"), Data: encodeJSON(manifest, "  ")},
		{Path: ".mcp.json", Data: encodeJSON(servers, "  ")},
		{Path: filepath.Join("hooks", "hooks.json"), Data: encodeJSON(hooksDoc, "  ")},
	}, nil
}

// ErrNotOurs is returned when a plugin directory holds a file of the
// plugin's name that cairn did not write.
var ErrNotOurs = errors.New("agentsetup: file exists and is not cairn's")

// PluginChange is what writing or removing the plugin does to one file.
type PluginChange struct {
	Path    string // absolute
	Changed bool
}

// WritePlugin writes files below dir (created if missing). A file already
// there with other content is refused (ErrNotOurs) before anything is
// written; one with the same content is left as it is. dryRun writes
// nothing.
func WritePlugin(dir string, files []PluginFile, dryRun bool) ([]PluginChange, error) {
	var out []PluginChange
	for _, f := range files {
		p := filepath.Join(dir, f.Path)
		cur, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, PluginChange{Path: p, Changed: true})
		case err != nil:
			return nil, err
		case !bytes.Equal(cur, f.Data):
			return nil, fmt.Errorf("%w: %s (choose another directory, or remove it)", ErrNotOurs, p)
		default:
			out = append(out, PluginChange{Path: p})
		}
	}
	if dryRun {
		return out, nil
	}
	for i, f := range files {
		if !out[i].Changed {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(out[i].Path), 0o755); err != nil {
			return nil, err
		}
		if err := writeAtomic(out[i].Path, f.Data, 0o644); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RemovePlugin removes the files of the plugin below dir that hold what
// cairn wrote, then the directories left empty (dir included). A file
// changed since is kept and reported unchanged.
func RemovePlugin(dir string, files []PluginFile, dryRun bool) ([]PluginChange, error) {
	var out []PluginChange
	for _, f := range files {
		p := filepath.Join(dir, f.Path)
		cur, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !bytes.Equal(cur, f.Data) {
			out = append(out, PluginChange{Path: p})
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, PluginChange{Path: p, Changed: true})
		if dryRun {
			continue
		}
		if err := os.Remove(p); err != nil {
			return nil, err
		}
	}
	if !dryRun {
		for _, d := range []string{filepath.Join(dir, ".claude-plugin"), filepath.Join(dir, "hooks"), dir} {
			_ = os.Remove(d) // only an empty directory goes
		}
	}
	return out, nil
}
