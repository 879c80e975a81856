package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/cairn-dev/cairn/embed"
)

func embedCommand() *command {
	return &command{
		name:    "embed",
		summary: "print the embedding vectors of texts (for checking a model, and for scripts)",
		usage:   "[--model MODEL] [--json] [TEXT... | --file F]",
		examples: []string{
			`cairn embed "how do I set busy_timeout?"`,
			`cairn embed --json --file questions.txt`,
			`cairn embed --model ~/models/bge-small-en-v1.5 --prompt query "what is WAL?"`,
		},
		run: runEmbed,
	}
}

func runEmbed(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	modelDir := fs.String("model", "", modelUsage)
	file := fs.String("file", "", "embed each line of `F` (- for stdin)")
	backend := fs.String("backend", "native", "encoder: native or hugot")
	prompt := fs.String("prompt", "", "prefix texts with the model's prompt `NAME` (e.g. query)")
	chunk := fs.Bool("chunk", false, "embed texts over the token limit window by window (default: truncate)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	texts := pos
	if *file != "" {
		if len(pos) > 0 {
			return usagef(c.name, "give TEXT arguments or --file, not both")
		}
		var r io.Reader = e.stdin
		if *file != "-" {
			f, err := os.Open(*file)
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			texts = append(texts, sc.Text())
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	if len(texts) == 0 {
		return usagef(c.name, "nothing to embed: give TEXT arguments or --file F")
	}
	choice, err := e.resolveModel(*modelDir)
	if err != nil {
		return err
	}
	opts := embed.Options{Backend: embed.Backend(*backend), Prompt: *prompt, CacheSize: -1}
	if *chunk {
		opts.Overflow = embed.OverflowChunk
	}
	m, err := choice.open(ctx, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.EmbedDetailed(ctx, texts)
	if err != nil {
		return err
	}
	if !e.json {
		fmt.Fprintf(e.stderr, "model %s, dim %d, max %d tokens\n", m.ModelID(), m.Dim(), m.MaxTokens())
	}
	w := bufio.NewWriter(e.stdout)
	for i, r := range res {
		if r.Truncated > 0 {
			fmt.Fprintf(e.stderr, "cairn embed: text %d has %d tokens; %d were truncated (use --chunk to embed all)\n", i+1, r.Tokens, r.Truncated)
		}
		var b []byte
		if e.json {
			b = append(b, '[')
		}
		for j, f := range r.Vector {
			if j > 0 {
				if e.json {
					b = append(b, ',')
				} else {
					b = append(b, ' ')
				}
			}
			b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
		}
		if e.json {
			b = append(b, ']')
		}
		b = append(b, '\n')
		w.Write(b)
	}
	return w.Flush()
}
