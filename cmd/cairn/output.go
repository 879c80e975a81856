package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/engine"
)

// printMessages prints messages as JSON lines or as text blocks.
func (e *env) printMessages(ms []engine.Message) error {
	if e.json {
		for _, m := range ms {
			if err := e.printJSON(m); err != nil {
				return err
			}
		}
		return nil
	}
	if len(ms) == 0 {
		fmt.Fprintln(e.stdout, "no messages")
	}
	for _, m := range ms {
		printMessageHeader(e.stdout, m, "")
		fmt.Fprintf(e.stdout, "%s\n\n", indent(m.Content))
	}
	return nil
}

func printMessageHeader(w io.Writer, m engine.Message, extra string) {
	fmt.Fprintf(w, "#%d  %s  %s  %s  %s  confidence %s%s\n", m.ID, formatTime(m.CreatedAt), m.ChannelID, m.SenderID,
		m.MessageType, strconv.FormatFloat(m.Confidence, 'f', -1, 64), extra)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
