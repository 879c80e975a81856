package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"golang.org/x/term"
)

// progressBar draws a one-line progress bar on stderr when stderr is a
// terminal and --json is off; otherwise it draws nothing. It redraws at most
// ten times a second.
type progressBar struct {
	w     io.Writer
	label string
	on    bool
	last  time.Time
	drawn bool
}

func (e *env) progress(label string) *progressBar {
	on := false
	if f, ok := e.stderr.(*os.File); ok && !e.json {
		on = term.IsTerminal(int(f.Fd()))
	}
	return &progressBar{w: e.stderr, label: label, on: on}
}

// update is an engine Progress callback.
func (p *progressBar) update(pr engine.Progress) {
	if !p.on {
		return
	}
	now := time.Now()
	if pr.Done < pr.Total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	frac := 0.0
	if pr.Total > 0 {
		frac = float64(pr.Done) / float64(pr.Total)
	}
	n := min(int(frac*width), width)
	item := pr.Item
	if len(item) > 40 {
		item = "…" + item[len(item)-39:]
	}
	fmt.Fprintf(p.w, "\r\033[K%s [%s%s] %3.0f%% %s", p.label, strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, item)
	p.drawn = true
}

// done clears the bar's line.
func (p *progressBar) done() {
	if p.on && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
