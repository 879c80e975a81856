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
	start time.Time
	last  time.Time
	drawn bool
}

func (e *env) progress(label string) *progressBar {
	on := false
	if f, ok := e.stderr.(*os.File); ok && !e.json {
		on = term.IsTerminal(int(f.Fd()))
	}
	return &progressBar{w: e.stderr, label: label, on: on, start: time.Now()}
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
	fmt.Fprintf(p.w, "\r\033[K%s", progressLine(p.label, pr, now.Sub(p.start)))
	p.drawn = true
}

// progressLine renders one state of a bar: label, bar, percentage, rate
// (units of Progress per second: bytes, records or items, as the caller
// counts), time left at that rate, and the current item.
func progressLine(label string, pr engine.Progress, elapsed time.Duration) string {
	const width = 30
	frac := 0.0
	if pr.Total > 0 {
		frac = min(float64(pr.Done)/float64(pr.Total), 1)
	}
	n := int(frac * width)
	line := fmt.Sprintf("%s [%s%s] %3.0f%%", label, strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100)
	if secs := elapsed.Seconds(); secs >= 0.5 && pr.Done > 0 {
		rate := float64(pr.Done) / secs
		line += " " + shortCount(rate) + "/s"
		if left := pr.Total - pr.Done; left > 0 {
			line += " " + shortDuration(time.Duration(float64(left)/rate*float64(time.Second))) + " left"
		}
	}
	item := pr.Item
	if len(item) > 40 {
		item = "…" + item[len(item)-39:]
	}
	if item != "" {
		line += " " + item
	}
	return line
}

// shortCount is n with a k, M or G suffix: 950, 12.3k, 4.1M.
func shortCount(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

// shortDuration is d rounded for a person: 45s, 3m05s, 2h10m.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// done clears the bar's line.
func (p *progressBar) done() {
	if p.on && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
