package redact

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// gitleaksTOML is gitleaks' default rule set, as published (see
// rules/README.md and rules/LICENSE-gitleaks).
//
//go:embed rules/gitleaks.toml
var gitleaksTOML []byte

// optionalDataRules are data rules that stay off unless enabled by name:
// generic-api-key matches any high-entropy value assigned to a key-like
// label, which in agent transcripts (code, configs, logs) redacts too much
// that is not a secret.
var optionalDataRules = map[string]bool{"generic-api-key": true}

// ruleFile is the part of the gitleaks config format cairn uses. Path and
// commit allowlists do not apply to text without a file path.
type ruleFile struct {
	Allowlist allowlistSpec `toml:"allowlist"`
	Rules     []struct {
		ID          string          `toml:"id"`
		Description string          `toml:"description"`
		Regex       string          `toml:"regex"`
		SecretGroup int             `toml:"secretGroup"`
		Entropy     float64         `toml:"entropy"`
		Keywords    []string        `toml:"keywords"`
		Allowlists  []allowlistSpec `toml:"allowlists"`
	} `toml:"rules"`
}

type allowlistSpec struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

// dataRule is one rule of the rule set. Its regular expressions compile on
// first use: most texts never contain any of a rule's keywords, and a
// one-shot process should not pay for compiling 200 patterns it never runs.
type dataRule struct {
	info        RuleInfo
	pattern     string
	secretGroup int
	entropy     float64
	keywords    []string // lower case; the rule runs only if one occurs
	allowSpecs  []allowlistSpec

	once sync.Once
	re   *regexp.Regexp
	// anchored is the pattern anchored at its start, set when every match
	// starts with one of the keywords; leadingBoundary says the pattern
	// starts with \b, checked by hand against the byte before.
	anchored        *regexp.Regexp
	leadingBoundary bool
	allow           []allowlist
	compErr         error
}

type allowlist struct {
	and       bool
	target    string // "secret", "match" or "line"
	regexes   []*regexp.Regexp
	stopWords []string
	// unusable: an AND list with path or commit conditions, which text
	// without a path never satisfies.
	unusable bool
}

// ruleSet is the parsed rule data. It is immutable once built.
type ruleSet struct {
	rules  []*dataRule
	byID   map[string]*dataRule
	global allowlistSpec

	globalOnce sync.Once
	globalList allowlist
	globalErr  error
}

// loadRuleSet parses the embedded rule data once per process; the result is
// shared, read-only, by every Redactor.
var loadRuleSet = sync.OnceValues(func() (*ruleSet, error) { return parseRuleSet(gitleaksTOML) })

func parseRuleSet(data []byte) (*ruleSet, error) {
	var f ruleFile
	if err := toml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: rule data: %w", ErrInvalidRule, err)
	}
	rs := &ruleSet{byID: make(map[string]*dataRule, len(f.Rules)), global: f.Allowlist}
	for _, r := range f.Rules {
		if r.Regex == "" { // a file-path rule: nothing to find in text
			continue
		}
		if !validRuleName(r.ID) {
			return nil, fmt.Errorf("%w: rule data: id %q", ErrInvalidRule, r.ID)
		}
		kw := make([]string, len(r.Keywords))
		for i, k := range r.Keywords {
			kw[i] = strings.ToLower(k)
		}
		dr := &dataRule{
			info:    RuleInfo{Name: r.ID, Description: r.Description, Default: !optionalDataRules[r.ID]},
			pattern: r.Regex, secretGroup: r.SecretGroup, entropy: r.Entropy, keywords: kw, allowSpecs: r.Allowlists,
		}
		rs.rules = append(rs.rules, dr)
		rs.byID[r.ID] = dr
	}
	return rs, nil
}

func compileAllowlist(s allowlistSpec) (allowlist, error) {
	a := allowlist{and: strings.EqualFold(s.Condition, "AND"), target: s.RegexTarget}
	if a.target == "" {
		a.target = "secret"
	}
	for _, p := range s.Regexes {
		re, err := regexp.Compile(p)
		if err != nil {
			return a, err
		}
		a.regexes = append(a.regexes, re)
	}
	for _, w := range s.StopWords {
		a.stopWords = append(a.stopWords, strings.ToLower(w))
	}
	a.unusable = a.and && (len(s.Paths) > 0 || len(s.Commits) > 0)
	return a, nil
}

// compile compiles the rule's patterns once; a rule that does not compile
// stays inactive (the tests compile every rule of the embedded data).
func (dr *dataRule) compile() error {
	dr.once.Do(func() {
		re, err := regexp.Compile(dr.scanPattern())
		if err != nil {
			dr.compErr = fmt.Errorf("%w: rule %q: %w", ErrInvalidRule, dr.info.Name, err)
			return
		}
		for _, s := range dr.allowSpecs {
			a, err := compileAllowlist(s)
			if err != nil {
				dr.compErr = fmt.Errorf("%w: rule %q allowlist: %w", ErrInvalidRule, dr.info.Name, err)
				return
			}
			dr.allow = append(dr.allow, a)
		}
		dr.re = re
		if tree, err := syntax.Parse(dr.scanPattern(), syntax.Perl); err == nil {
			tree = tree.Simplify()
			if prefixes, boundary, ok := literalPrefixes(tree); ok && dr.keywordsLead(prefixes) {
				if a, err := regexp.Compile(`^(?:` + dr.scanPattern() + `)`); err == nil {
					dr.anchored, dr.leadingBoundary = a, boundary
				}
			}
		}
	})
	return dr.compErr
}

// lazyContext is the lead of most keyword-and-assignment rules: up to 50
// name characters before the keyword, matched lazily. It widens the match
// but never changes the secret group, and it doubles the scan time, so it
// is dropped unless an allowlist looks at the whole match.
const lazyContext = `(?i)[\w.-]{0,50}?`

// tokenEnd is how most rules of the data end a token: before a quote,
// space, ';', an escaped newline or the end of the text. In prose and logs
// a token also ends before '.', ',', ')', '/', ':' and the like, where
// these rules stored it verbatim; wideTokenEnd ends it before any
// character that cannot continue it (not a letter, digit or '_': the
// rules' character classes still decide where a token with '-', '.' or
// '/' inside it stops).
const (
	tokenEnd     = `(?:[\x60'"\s;]|\\[nr]|$)`
	wideTokenEnd = `(?:[^0-9A-Za-z_]|$)`
)

// scanPattern is the pattern the rule runs.
func (dr *dataRule) scanPattern() string {
	p := strings.ReplaceAll(dr.pattern, tokenEnd, wideTokenEnd)
	for _, a := range dr.allowSpecs {
		if a.RegexTarget == "match" {
			return p
		}
	}
	if rest, ok := strings.CutPrefix(p, lazyContext); ok {
		return "(?i)" + rest
	}
	return p
}

func (rs *ruleSet) globalAllow() (allowlist, error) {
	rs.globalOnce.Do(func() {
		rs.globalList, rs.globalErr = compileAllowlist(allowlistSpec{Regexes: rs.global.Regexes, StopWords: rs.global.StopWords})
	})
	return rs.globalList, rs.globalErr
}

// allows reports whether the allowlist exempts a finding.
func (a *allowlist) allows(secret, match, line string) bool {
	if a.unusable {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	var checks, hits int
	if len(a.regexes) > 0 {
		checks++
		for _, re := range a.regexes {
			if re.MatchString(target) {
				hits++
				break
			}
		}
	}
	if len(a.stopWords) > 0 {
		checks++
		low := strings.ToLower(secret)
		for _, w := range a.stopWords {
			if strings.Contains(low, w) {
				hits++
				break
			}
		}
	}
	if a.and {
		return checks > 0 && hits == checks
	}
	return hits > 0
}

// keywordIndex finds which of a set of lower-case keywords occur in a text
// in one pass: keywords are bucketed by their first two bytes, and each
// position of the text checks only its bucket.
type keywordIndex struct {
	// has marks the two-byte starts that have a bucket: most positions of
	// a text miss, and a bit test is much cheaper than a map lookup.
	has     [1 << 16 / 64]uint64
	buckets map[uint16][]int32 // first two bytes -> keyword numbers
	short   []int32            // one-byte keywords
	words   []string
}

func newKeywordIndex(words []string) *keywordIndex {
	ki := &keywordIndex{buckets: map[uint16][]int32{}, words: words}
	for i, w := range words {
		if len(w) < 2 {
			ki.short = append(ki.short, int32(i))
			continue
		}
		k := uint16(w[0])<<8 | uint16(w[1])
		ki.buckets[k] = append(ki.buckets[k], int32(i))
		ki.has[k/64] |= 1 << (k % 64)
	}
	return ki
}

// occurrences returns, per keyword, the offsets where it occurs in low (a
// text lower-cased by asciiLower); nil for an absent keyword.
func (ki *keywordIndex) occurrences(low string) [][]int {
	occ := make([][]int, len(ki.words))
	for p := 0; p < len(low); p++ {
		for _, i := range ki.short {
			if low[p] == ki.words[i][0] {
				occ[i] = append(occ[i], p)
			}
		}
		if p+1 == len(low) {
			break
		}
		k := uint16(low[p])<<8 | uint16(low[p+1])
		if ki.has[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		b := ki.buckets[k]
		for _, i := range b {
			if strings.HasPrefix(low[p:], ki.words[i]) {
				occ[i] = append(occ[i], p)
			}
		}
	}
	return occ
}

// asciiLower lower-cases ASCII letters only, so offsets in the result are
// offsets in s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// dataRules are the data rules one Redactor runs, with the keyword index
// over them; built on the Redactor's first use.
type dataRules struct {
	set    *ruleSet
	rules  []*dataRule
	index  *keywordIndex
	ruleKW [][]int32 // per rule: its keyword numbers; empty means always run
}

func newDataRules(set *ruleSet, rules []*dataRule) *dataRules {
	d := &dataRules{set: set, rules: rules, ruleKW: make([][]int32, len(rules))}
	num := map[string]int32{}
	var words []string
	for i, r := range rules {
		for _, k := range r.keywords {
			n, ok := num[k]
			if !ok {
				n = int32(len(words))
				num[k] = n
				words = append(words, k)
			}
			d.ruleKW[i] = append(d.ruleKW[i], n)
		}
	}
	d.index = newKeywordIndex(words)
	return d
}

// redact applies the data rules to s, adding counts to rep. A rule runs
// only if one of its keywords occurs (applyNear).
func (d *dataRules) redact(s string, rep *Report, mark markFunc) string {
	if len(d.rules) == 0 || s == "" {
		return s
	}
	occ := d.index.occurrences(asciiLower(s))
	global, gerr := d.set.globalAllow()
	var gl *allowlist
	if gerr == nil {
		gl = &global
	}
	var at []int
	for i, r := range d.rules {
		at = at[:0]
		for _, k := range d.ruleKW[i] {
			at = append(at, occ[k]...)
		}
		if len(at) == 0 || r.compile() != nil {
			continue
		}
		var n int
		s, n = r.applyNear(s, at, gl, mark)
		if n > 0 {
			if rep.Counts == nil {
				rep.Counts = make(map[string]int)
			}
			rep.Counts[r.info.Name] += n
			occ = d.index.occurrences(asciiLower(s)) // offsets moved
		}
	}
	return s
}

// applyNear is apply on s where the rule's keywords occur at the offsets
// at: anchored at them when every match starts with a keyword, else a scan
// of all of s (a keyword anywhere in the text enables the rule, as in
// gitleaks, so nothing narrower is exact).
func (dr *dataRule) applyNear(s string, at []int, global *allowlist, mark markFunc) (string, int) {
	if dr.anchored != nil {
		slices.Sort(at)
		return dr.applyAnchored(s, at, global, mark)
	}
	return dr.apply(s, global, mark)
}

// literalPrefixes returns the literal texts (lower-cased) one of which
// every match of re starts with, and whether re starts with \b; ok is
// false when a match can start otherwise.
func literalPrefixes(re *syntax.Regexp) (prefixes []string, boundary, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{asciiLower(string(re.Rune))}, false, true
	case syntax.OpCapture:
		return literalPrefixes(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			p, b, ok := literalPrefixes(sub)
			if !ok || b {
				return nil, false, false
			}
			prefixes = append(prefixes, p...)
		}
		return prefixes, false, true
	case syntax.OpConcat:
		for i, sub := range re.Sub {
			if sub.Op == syntax.OpWordBoundary && i == 0 {
				boundary = true
				continue
			}
			p, b, ok := literalPrefixes(sub)
			return p, boundary || b, ok
		}
	}
	return nil, false, false
}

// keywordsLead reports whether each of prefixes starts with one of the
// rule's keywords, so that every match starts at a keyword occurrence.
func (dr *dataRule) keywordsLead(prefixes []string) bool {
	for _, p := range prefixes {
		lead := false
		for _, k := range dr.keywords {
			if strings.HasPrefix(p, k) {
				lead = true
				break
			}
		}
		if !lead {
			return false
		}
	}
	return len(prefixes) > 0
}

// apply replaces every finding of the rule in s: the secret group (the
// rule's secretGroup, else its first non-empty group, else the whole
// match), when it is random enough (entropy), not allowlisted, and not
// already a marker.
func (dr *dataRule) apply(s string, global *allowlist, mark markFunc) (string, int) {
	return dr.applyLocs(s, dr.re.FindAllStringSubmatchIndex(s, -1), global, mark)
}

// applyAnchored is apply for a rule whose every match starts with one of
// its keywords: the anchored pattern runs at each keyword offset in at
// (ascending), and a try fails within a few bytes where there is no
// secret, instead of the pattern scanning all of s.
func (dr *dataRule) applyAnchored(s string, at []int, global *allowlist, mark markFunc) (string, int) {
	var locs [][]int
	end := 0
	for i, p := range at {
		if p < end || i > 0 && p == at[i-1] {
			continue
		}
		if dr.leadingBoundary && p > 0 && isWordByte(s[p-1]) == isWordByte(s[p]) {
			continue
		}
		loc := dr.anchored.FindStringSubmatchIndex(s[p:])
		if loc == nil {
			continue
		}
		for j := range loc {
			if loc[j] >= 0 {
				loc[j] += p
			}
		}
		locs = append(locs, loc)
		end = max(loc[1], p+1)
	}
	return dr.applyLocs(s, locs, global, mark)
}

// applyLocs replaces the secrets of the matches locs (ascending,
// submatch indexes into s).
func (dr *dataRule) applyLocs(s string, locs [][]int, global *allowlist, mark markFunc) (string, int) {
	if locs == nil {
		return s, 0
	}
	var spans []span
	last := 0
	for _, loc := range locs {
		start, end := loc[0], loc[1]
		if len(loc) > 2 {
			if g := dr.secretGroup; g > 0 && 2*g+1 < len(loc) {
				start, end = loc[2*g], loc[2*g+1]
			} else {
				for g := 1; 2*g+1 < len(loc); g++ {
					if loc[2*g] >= 0 && loc[2*g+1] > loc[2*g] {
						start, end = loc[2*g], loc[2*g+1]
						break
					}
				}
			}
		}
		if start < 0 || end <= start || start < last {
			continue
		}
		secret := s[start:end]
		if strings.Contains(secret, markerPrefix) {
			continue
		}
		if dr.entropy > 0 && shannonEntropy(secret) < dr.entropy {
			continue
		}
		if strings.HasPrefix(dr.info.Name, "generic") && !strings.ContainsAny(secret, "0123456789") {
			continue // gitleaks' rule for generic findings: a secret has a digit
		}
		match := s[loc[0]:loc[1]]
		line := lineAround(s, loc[0], loc[1])
		if global != nil && global.allows(secret, match, line) {
			continue
		}
		allowed := false
		for i := range dr.allow {
			if dr.allow[i].allows(secret, match, line) {
				allowed = true
				break
			}
		}
		if allowed {
			continue
		}
		spans = append(spans, span{start, end})
		last = end
	}
	return replaceSpans(s, dr.info.Name, spans, mark)
}

func lineAround(s string, start, end int) string {
	ls := strings.LastIndexByte(s[:start], '\n') + 1
	le := strings.IndexByte(s[end:], '\n')
	if le < 0 {
		return s[ls:]
	}
	return s[ls : end+le]
}

// shannonEntropy is the Shannon entropy of s's bytes, in bits per byte.
func shannonEntropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
