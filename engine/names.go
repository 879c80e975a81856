package engine

import "strings"

// nameSyntax is the syntax of agent, project, channel and message type
// names: 1 to max bytes, ASCII letters and digits plus the punctuation in
// punct, starting with a letter or digit. It is checked by hand rather than
// by regexp because compiling the counted repetitions ({0,127}) cost about
// a millisecond and 4,600 allocations at every process start, before main.
type nameSyntax struct {
	max   int
	punct string
}

// MatchString reports whether s is a name of this syntax.
func (n nameSyntax) MatchString(s string) bool {
	if len(s) == 0 || len(s) > n.max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if i == 0 || !strings.ContainsRune(n.punct, rune(c)) {
			return false
		}
	}
	return true
}
