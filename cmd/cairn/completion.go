package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

func completionCommand() *command {
	return &command{
		name:    "completion",
		summary: "print a shell completion script (bash, zsh or fish)",
		usage:   "bash|zsh|fish",
		examples: []string{
			`source <(cairn completion bash)                              # bash, this shell`,
			`cairn completion bash > ~/.local/share/bash-completion/completions/cairn`,
			`cairn completion zsh > "${fpath[1]}/_cairn"                  # zsh (then compinit)`,
			`cairn completion fish > ~/.config/fish/completions/cairn.fish`,
		},
		run: runCompletion,
	}
}

func runCompletion(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(c.name, "expected one shell: bash, zsh or fish")
	}
	specs, err := completionSpecs(ctx)
	if err != nil {
		return err
	}
	switch pos[0] {
	case "bash":
		writeBashCompletion(e, specs)
	case "zsh":
		writeZshCompletion(e, specs)
	case "fish":
		writeFishCompletion(e, specs)
	default:
		return usagef(c.name, "unknown shell %q: expected bash, zsh or fish%s", pos[0], didYouMean(pos[0], []string{"bash", "zsh", "fish"}))
	}
	return nil
}

// completionSpec is what completion knows of a command.
type completionSpec struct {
	name, summary string
	flags         []flagSpec
}

type flagSpec struct{ name, usage string }

var helpFlagLine = regexp.MustCompile(`^  --([a-z0-9-]+)(?: \S+)?\s+(.*)$`)

// completionSpecs lists every command with its flags, read from the help
// each command prints (commands declare their flags as they run, so their
// help is where all of them are listed).
func completionSpecs(ctx context.Context) ([]completionSpec, error) {
	var specs []completionSpec
	for _, c := range commands() {
		var out bytes.Buffer
		he := &env{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
		if err := c.run(ctx, he, c, []string{"--help"}); err != errHelp {
			return nil, fmt.Errorf("completion: help of %s: %v", c.name, err)
		}
		spec := completionSpec{name: c.name, summary: c.summary}
		seen := map[string]bool{}
		for _, line := range strings.Split(out.String(), "\n") {
			if m := helpFlagLine.FindStringSubmatch(line); m != nil && !seen[m[1]] {
				seen[m[1]] = true
				spec.flags = append(spec.flags, flagSpec{m[1], m[2]})
			}
		}
		sort.Slice(spec.flags, func(i, j int) bool { return spec.flags[i].name < spec.flags[j].name })
		specs = append(specs, spec)
	}
	return specs, nil
}

func writeBashCompletion(e *env, specs []completionSpec) {
	w := e.stdout
	var names []string
	for _, s := range specs {
		names = append(names, s.name)
	}
	fmt.Fprintf(w, `# bash completion for cairn: source <(cairn completion bash)
_cairn() {
    local cur=${COMP_WORDS[COMP_CWORD]} cmd="" w
    for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
        case $w in -*) ;; *) cmd=$w; break ;; esac
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "%s help --data-dir --json --version --help" -- "$cur"))
        return
    fi
    [[ $cur == -* ]] || return
    case $cmd in
`, strings.Join(names, " "))
	for _, s := range specs {
		var fl []string
		for _, f := range s.flags {
			fl = append(fl, "--"+f.name)
		}
		fmt.Fprintf(w, "        %s) COMPREPLY=($(compgen -W \"%s --help\" -- \"$cur\")) ;;\n", s.name, strings.Join(fl, " "))
	}
	fmt.Fprint(w, "    esac\n}\ncomplete -o default -F _cairn cairn\n")
}

// zshQuote escapes a description for a zsh _describe/_arguments spec.
func zshQuote(s string) string {
	return strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:").Replace(s)
}

func writeZshCompletion(e *env, specs []completionSpec) {
	w := e.stdout
	fmt.Fprint(w, "#compdef cairn\n# zsh completion for cairn: cairn completion zsh > \"${fpath[1]}/_cairn\"\n_cairn() {\n    local -a cmds\n    cmds=(\n")
	for _, s := range specs {
		fmt.Fprintf(w, "        '%s:%s'\n", s.name, zshQuote(s.summary))
	}
	fmt.Fprint(w, "    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' cmds\n        return\n    fi\n    case $words[2] in\n")
	for _, s := range specs {
		fmt.Fprintf(w, "    %s)\n        _arguments", s.name)
		for _, f := range s.flags {
			fmt.Fprintf(w, " \\\n            '--%s[%s]'", f.name, zshQuote(f.usage))
		}
		fmt.Fprint(w, " \\\n            '*:file:_files' ;;\n")
	}
	fmt.Fprint(w, "    esac\n}\n_cairn \"$@\"\n")
}

func writeFishCompletion(e *env, specs []completionSpec) {
	w := e.stdout
	q := strings.NewReplacer(`\`, `\\`, "'", `\'`)
	fmt.Fprint(w, "# fish completion for cairn: cairn completion fish > ~/.config/fish/completions/cairn.fish\n")
	for _, s := range specs {
		fmt.Fprintf(w, "complete -c cairn -f -n __fish_use_subcommand -a %s -d '%s'\n", s.name, q.Replace(s.summary))
	}
	for _, s := range specs {
		for _, f := range s.flags {
			fmt.Fprintf(w, "complete -c cairn -n '__fish_seen_subcommand_from %s' -l %s -d '%s'\n", s.name, f.name, q.Replace(f.usage))
		}
	}
}
