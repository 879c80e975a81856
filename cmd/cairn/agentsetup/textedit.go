package agentsetup

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Markers delimit cairn's block in an instructions file.
const (
	beginMarker = "<!-- cairn:begin (written by `cairn setup`; `cairn setup --uninstall` removes it) -->"
	endMarker   = "<!-- cairn:end -->"
)

// findBlock returns the byte range [start, end) of the lines from the first
// line starting with begin up to and including the first following line
// starting with end; ok is false when there is no complete block.
func findBlock(data []byte, isBegin, isEnd func(line string) bool) (start, end int, ok bool) {
	pos := 0
	start = -1
	for pos < len(data) {
		next := bytes.IndexByte(data[pos:], '\n')
		lineEnd := len(data)
		if next >= 0 {
			lineEnd = pos + next + 1
		}
		line := strings.TrimRight(string(data[pos:lineEnd]), "\r\n")
		switch {
		case start < 0 && isBegin(line):
			start = pos
		case start >= 0 && isEnd(line):
			return start, lineEnd, true
		}
		pos = lineEnd
	}
	return 0, 0, false
}

func isBeginMarker(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "<!-- cairn:begin")
}
func isEndMarker(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "<!-- cairn:end")
}

// setMarkedBlock puts block (without markers) between the markers: in place
// of an existing block, else appended after a blank line.
func setMarkedBlock(data []byte, block string) []byte {
	full := beginMarker + "\n" + strings.TrimRight(block, "\n") + "\n" + endMarker + "\n"
	if s, e, ok := findBlock(data, isBeginMarker, isEndMarker); ok {
		return concat(data[:s], []byte(full), data[e:])
	}
	return appendSection(data, []byte(full))
}

// removeMarkedBlock removes the block and the blank line setMarkedBlock put
// before it.
func removeMarkedBlock(data []byte) []byte {
	s, e, ok := findBlock(data, isBeginMarker, isEndMarker)
	if !ok {
		return data
	}
	return removeSection(data, s, e)
}

// appendSection appends sec to data, after a blank line when data is not
// empty.
func appendSection(data, sec []byte) []byte {
	switch {
	case len(data) == 0:
		return append([]byte(nil), sec...)
	case !bytes.HasSuffix(data, []byte("\n")):
		return concat(data, []byte("\n\n"), sec)
	case bytes.HasSuffix(data, []byte("\n\n")):
		return concat(data, sec)
	}
	return concat(data, []byte("\n"), sec)
}

// removeSection cuts data[s:e] and, when it was the last thing in the file,
// the blank line appendSection put before it.
func removeSection(data []byte, s, e int) []byte {
	if e == len(data) && s >= 2 && data[s-1] == '\n' && data[s-2] == '\n' {
		s--
	}
	return concat(data[:s], data[e:])
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// tomlTableHeader reports whether line is the header of table name or of
// one of its subtables ([name], [name.x], also with name's last part
// quoted).
func tomlTableHeader(line, prefix, name string) bool {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") || strings.HasPrefix(t, "[[") {
		return false
	}
	inner := strings.TrimSpace(strings.TrimSuffix(strings.SplitN(t[1:], "]", 2)[0], "]"))
	for _, n := range []string{prefix + "." + name, prefix + `."` + name + `"`} {
		if inner == n || strings.HasPrefix(inner, n+".") {
			return true
		}
	}
	return false
}

func isTableHeader(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "[") }

// tomlBlock finds the lines of table prefix.name and its subtables: from
// the header to the next header of another table.
func tomlBlock(data []byte, prefix, name string) (start, end int, ok bool) {
	pos, start := 0, -1
	for pos < len(data) {
		next := bytes.IndexByte(data[pos:], '\n')
		lineEnd := len(data)
		if next >= 0 {
			lineEnd = pos + next + 1
		}
		line := string(data[pos:lineEnd])
		mine := tomlTableHeader(line, prefix, name)
		switch {
		case start < 0 && mine:
			start = pos
		case start >= 0 && isTableHeader(line) && !mine:
			return start, trimTrailingBlank(data, start, pos), true
		}
		pos = lineEnd
	}
	if start >= 0 {
		return start, len(data), true
	}
	return 0, 0, false
}

// trimTrailingBlank moves end back over blank lines (they separate the
// block from the next table and stay with it).
func trimTrailingBlank(data []byte, start, end int) int {
	for end > start {
		prev := bytes.LastIndexByte(data[start:end-1], '\n')
		lineStart := start
		if prev >= 0 {
			lineStart = start + prev + 1
		}
		if strings.TrimSpace(string(data[lineStart:end])) != "" {
			break
		}
		end = lineStart
	}
	return end
}

// setTOMLTable replaces table prefix.name (and its subtables) with block,
// or appends block. The file must parse before and after, and must not
// define the table in another form (inline or dotted keys), which this
// text edit would not see.
func setTOMLTable(data []byte, prefix, name, block string) ([]byte, error) {
	var before map[string]any
	if err := toml.Unmarshal(data, &before); err != nil {
		return nil, fmt.Errorf("not valid TOML (fix it first): %w", err)
	}
	s, e, ok := tomlBlock(data, prefix, name)
	if !ok && tomlHas(before, prefix, name) {
		return nil, fmt.Errorf("%s.%s is defined inline or with dotted keys; remove it by hand and run setup again", prefix, name)
	}
	var out []byte
	if ok {
		out = concat(data[:s], []byte(block), data[e:])
	} else {
		out = appendSection(data, []byte(block))
	}
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return nil, fmt.Errorf("the edit would not be valid TOML (%w); edit the file by hand", err)
	}
	return out, nil
}

// removeTOMLTable removes table prefix.name and its subtables.
func removeTOMLTable(data []byte, prefix, name string) []byte {
	s, e, ok := tomlBlock(data, prefix, name)
	if !ok {
		return data
	}
	return removeSection(data, s, e)
}

func tomlHas(doc map[string]any, prefix, name string) bool {
	t, ok := doc[prefix].(map[string]any)
	if !ok {
		return false
	}
	_, ok = t[name]
	return ok
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	b, _ := toml.Marshal(map[string]string{"v": s})
	return strings.TrimSpace(strings.TrimPrefix(string(b), "v = "))
}
