package redact

import (
	"flag"
	"math/rand"
	"regexp/syntax"
	"strings"
	"testing"
	"time"
	"unicode"
)

var sampleSeed = flag.Int64("seed", 0, "seed of the rule samples (0: time-based)")

// sampleRand is the generator of a test's random samples, from -seed or
// the clock, logged so that a failure can be replayed.
func sampleRand(t *testing.T) *rand.Rand {
	seed := *sampleSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("-seed %d", seed)
	return rand.New(rand.NewSource(seed))
}

// TestRuleDataCompiles: every rule of the embedded data compiles under Go's
// RE2, with its allowlists, and has keywords for the prefilter.
func TestRuleDataCompiles(t *testing.T) {
	set, err := loadRuleSet()
	if err != nil {
		t.Fatal(err)
	}
	anchored := 0
	defer func() { t.Logf("%d of %d rules run anchored at their keywords", anchored, len(set.rules)) }()
	if len(set.rules) < 200 {
		t.Fatalf("rule data has %d text rules, want the gitleaks default set (200+)", len(set.rules))
	}
	for _, r := range set.rules {
		if err := r.compile(); err != nil {
			t.Errorf("%v", err)
		}
		if len(r.keywords) == 0 {
			t.Errorf("rule %s has no keywords: it would run on every text", r.info.Name)
		}
		if r.anchored != nil {
			anchored++
		}
	}
	if _, err := set.globalAllow(); err != nil {
		t.Errorf("global allowlist: %v", err)
	}
}

// TestRuleSamples: for every rule, a text generated from the rule's own
// pattern (random characters from each class, seeded) is redacted by the
// default Redactor (with the optional rules on), and the secret the rule
// finds in it is gone afterwards.
func TestRuleSamples(t *testing.T) {
	rng := sampleRand(t)
	set, err := loadRuleSet()
	if err != nil {
		t.Fatal(err)
	}
	var optional []string
	for name := range optionalDataRules {
		optional = append(optional, name)
	}
	red, err := New(Options{Enable: optional})
	if err != nil {
		t.Fatal(err)
	}
	global, _ := set.globalAllow()
	for _, r := range set.rules {
		if ownName(builtins(), r.info.Name) {
			continue // replaced by cairn's own rule
		}
		if err := r.compile(); err != nil {
			t.Fatal(err)
		}
		re, err := syntax.Parse(r.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		re = re.Simplify()
		var sample, secret string
		for try := 0; try < 200 && secret == ""; try++ {
			var b strings.Builder
			generate(&b, re, rng)
			sample = withKeyword(b.String(), r.keywords)
			secret = findSecret(r, sample, &global)
		}
		if secret == "" {
			t.Errorf("%s: no sample of %q passes the rule's own checks (entropy, allowlists)", r.info.Name, r.pattern)
			continue
		}
		// The prefiltered paths (anchored at keywords, or windows around
		// them) find what the plain scan finds, also with text around.
		padded := strings.Repeat("x = 1 and some key words: token, key, secret\n", 30) + sample + "\n" + strings.Repeat("more text ", 50)
		want, _ := r.apply(padded, &global, markerOf)
		ki := newKeywordIndex(r.keywords)
		var at []int
		for _, o := range ki.occurrences(asciiLower(padded)) {
			at = append(at, o...)
		}
		if got, _ := r.applyNear(padded, at, &global, markerOf); got != want {
			t.Errorf("%s: prefiltered scan differs from the plain one (anchored %v):\n got %q\nwant %q", r.info.Name, r.anchored != nil, got, want)
		}
		out, rep := red.Redact(sample)
		if rep.Total() == 0 || strings.Contains(out, secret) {
			t.Errorf("%s: sample %q: secret %q not redacted: %q (%v)", r.info.Name, sample, secret, out, rep)
		}
	}
}

// withKeyword returns s with the rule's first keyword in front when s has
// none of them: the rule data (as gitleaks) runs a rule only on text with
// one of its keywords, and a pattern may match text without any (a "."
// generated as another character).
func withKeyword(s string, keywords []string) string {
	low := strings.ToLower(s)
	for _, k := range keywords {
		if strings.Contains(low, k) {
			return s
		}
	}
	return keywords[0] + " " + s
}

// findSecret is what the rule alone would redact in s: the first secret.
func findSecret(r *dataRule, s string, global *allowlist) string {
	out, n := r.apply(s, global, markerOf)
	if n == 0 {
		return ""
	}
	i := strings.Index(out, markerPrefix)
	rest := s[i:]
	tail := out[i+len(Marker(r.info.Name)):]
	return strings.TrimSuffix(rest, tail)
}

// generate writes a random string that re matches.
func generate(b *strings.Builder, re *syntax.Regexp, rng *rand.Rand) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && rng.Intn(2) == 0 {
				r = unicode.SimpleFold(r)
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		b.WriteRune(pickRune(re.Rune, rng))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[rng.Intn(36)])
	case syntax.OpCapture:
		generate(b, re.Sub[0], rng)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			generate(b, s, rng)
		}
	case syntax.OpAlternate:
		generate(b, re.Sub[rng.Intn(len(re.Sub))], rng)
	case syntax.OpQuest:
		if rng.Intn(2) == 0 {
			generate(b, re.Sub[0], rng)
		}
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		n := lo
		if hi < 0 {
			hi = lo + 8
		}
		if hi > lo {
			n += rng.Intn(min(hi, lo+24) - lo + 1)
		}
		for range n {
			generate(b, re.Sub[0], rng)
		}
	}
}

// pickRune picks a random rune of a class, printable ASCII when the class
// has some.
func pickRune(ranges []rune, rng *rand.Rand) rune {
	var ascii []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := max(ranges[i], 0x21); r <= min(ranges[i+1], 0x7e); r++ {
			ascii = append(ascii, r)
		}
	}
	if len(ascii) > 0 {
		return ascii[rng.Intn(len(ascii))]
	}
	if len(ranges) >= 2 {
		return ranges[0]
	}
	return 'x'
}

// BenchmarkLoadRuleSet is what the first Redact of a process pays to parse
// the rule data (compiling patterns is separate, per rule, on first use).
func BenchmarkLoadRuleSet(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseRuleSet(gitleaksTOML); err != nil {
			b.Fatal(err)
		}
	}
}
