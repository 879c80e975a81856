package engine

import (
	"flag"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var namesSeed = flag.Uint64("names-seed", 1, "seed of TestNameSyntaxMatchesRegexp's random names")

// TestNameSyntaxMatchesRegexp checks the hand-written name checks against
// the regular expressions that state the rules.
func TestNameSyntaxMatchesRegexp(t *testing.T) {
	cases := []struct {
		syntax nameSyntax
		re     *regexp.Regexp
	}{
		{agentRE, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)},
		{projectRE, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`)},
		{channelRE, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:-]{0,127}$`)},
		{typeRE, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)},
	}
	t.Logf("-names-seed=%d", *namesSeed)
	rng := rand.New(rand.NewPCG(*namesSeed, 0))
	// Half the names draw only from the allowed characters, so that many
	// match; the rest include characters no name allows.
	alphabets := [][]rune{[]rune("aZ09._-/:"), []rune("aZ09._-/:@ é\x00\n")}
	names := []string{"", "a", "-a", ".", "a-", "a:b", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("a", 128), strings.Repeat("a", 129)}
	for range 20000 {
		var b strings.Builder
		alphabet := alphabets[rng.IntN(2)]
		for range rng.IntN(140) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		names = append(names, b.String())
	}
	for _, c := range cases {
		for _, s := range names {
			if got, want := c.syntax.MatchString(s), c.re.MatchString(s); got != want {
				t.Errorf("%v.MatchString(%q) = %v, regexp %s says %v", c.syntax, s, got, c.re, want)
			}
		}
	}
}
