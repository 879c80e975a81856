package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// ErrInvalidRule reports a rule that cannot be used: a bad name, a pattern
// that does not compile, a capture group that does not exist, or an unknown
// rule name in Options.Enable or Options.Disable.
var ErrInvalidRule = errors.New("redact: invalid rule")

// markerPrefix starts every replacement; spans that already are markers are
// never redacted again.
const markerPrefix = "[REDACTED:"

// Marker returns the text that replaces a span matched by the named rule.
func Marker(rule string) string { return markerPrefix + rule + "]" }

// Rule is a custom redaction rule supplied by the user (config file).
type Rule struct {
	// Name identifies the rule in markers and counts: lower-case letters,
	// digits and '-', 1 to 64 characters.
	Name string
	// Pattern is an RE2 regular expression.
	Pattern string
	// Group is the capture group to replace; 0 replaces the whole match.
	Group int
}

// RuleInfo describes a built-in rule.
type RuleInfo struct {
	Name        string
	Description string
	Default     bool // on unless disabled
}

// Options selects the rules of a Redactor. The zero value means the default
// rules only.
type Options struct {
	// Disable turns off built-in rules by name (default or enabled ones).
	Disable []string
	// Enable turns on optional built-in rules by name ("email",
	// "card-number", "password-assignment", "generic-api-key"); names of
	// earlier versions (github-token, slack-token, ...) select the rules
	// that replaced them.
	Enable []string
	// Custom rules run after the built-in ones, in order.
	Custom []Rule
	// None turns off every built-in rule; Enable and Custom still apply.
	None bool
}

type rule struct {
	name     string
	re       *regexp.Regexp
	group    int
	validate func(string) bool
	// quick is a set of literal substrings, one of which must occur in the
	// input for the rule to possibly match; empty means always run.
	quick []string
	left  bool // see builtin.left
	fold  bool // quick match is case-insensitive
	first bool // runs before the rule data
}

// Redactor replaces secrets in text. It is safe for concurrent use.
type Redactor struct {
	rules      []rule // cairn's own and custom rules
	selectData func(*ruleSet) []*dataRule
	dataOnce   sync.Once
	dataSel    *dataRules
}

// Report counts redactions per rule name.
type Report struct {
	Counts map[string]int
}

// Total returns the number of redacted spans.
func (r Report) Total() int {
	n := 0
	for _, c := range r.Counts {
		n += c
	}
	return n
}

// Add merges o into r.
func (r *Report) Add(o Report) {
	for k, v := range o.Counts {
		if r.Counts == nil {
			r.Counts = make(map[string]int)
		}
		r.Counts[k] += v
	}
}

// String renders the counts sorted by rule name, e.g. "github-token=2 jwt=1".
func (r Report) String() string {
	names := make([]string, 0, len(r.Counts))
	for k := range r.Counts {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, r.Counts[k])
	}
	return b.String()
}

type builtin struct {
	info    RuleInfo
	pattern string
	// left: the match must not follow a letter, digit or '_' (a leading
	// \b, checked in code because a regexp starting with \b loses RE2's
	// literal-prefix scan and runs about 20 times slower).
	left     bool
	group    int
	validate func(string) bool
	quick    []string
	fold     bool
}

// builtins lists the built-in rules in the order they run. Private keys run
// first so that a whole key block becomes one marker.
//
// It is long because it is a table of rules, one entry each with its
// pattern and the reasoning behind it.
func builtins() []builtin {
	return []builtin{
		{
			info: RuleInfo{"private-key", "PEM/OpenSSH private key blocks (RSA, EC, DSA, OPENSSH, PGP, encrypted), also truncated ones and ones with escaped newlines", true},
			// A BEGIN line, then either everything up to the matching END
			// line, or (truncated key) the base64 body that follows.
			pattern: `-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,-]*)`,
			quick:   []string{"PRIVATE KEY"},
		},
		{
			info:    RuleInfo{"aws-secret-key", "AWS secret access keys (40 characters) next to an aws_secret_access_key / SecretAccessKey label", true},
			pattern: `(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b`,
			group:   1,
			quick:   []string{"secret"},
			fold:    true,
		},
		{
			// gitleaks' aws-access-token lets ids ending in EXAMPLE through
			// (they are AWS's documentation keys); in agent memory a reader
			// cannot tell a pasted example from a real id, so cairn
			// redacts every id of the AWS form.
			info:    RuleInfo{"aws-access-key-id", "AWS access key ids (AKIA..., ASIA..., 20 characters), documentation examples included", true},
			pattern: `(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`,
			left:    true,
			quick:   []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		},
		{
			info:    RuleInfo{"gcp-service-account", "private_key_id of GCP service-account key files (the key itself is caught by private-key)", true},
			pattern: `"private_key_id"\s*:\s*"([0-9a-f]{40})"`,
			group:   1,
			quick:   []string{"private_key_id"},
		},
		{
			info:    RuleInfo{"openai-key", "OpenAI-style secret keys: sk-, sk-proj-, sk-svcacct-, sk-ant-... (mixed case and digits, 20+ characters)", true},
			pattern: `sk-[A-Za-z0-9_\-]{20,}`,
			left:    true,
			quick:   []string{"sk-"},
			// Kebab-case identifiers ("sk-learn-some-long-name") are not
			// keys: a key mixes upper case, lower case and digits.
			validate: func(s string) bool {
				var up, low, dig bool
				for _, r := range s[3:] {
					switch {
					case r >= 'A' && r <= 'Z':
						up = true
					case r >= 'a' && r <= 'z':
						low = true
					case r >= '0' && r <= '9':
						dig = true
					}
				}
				return up && low && dig
			},
		},
		{
			// An AWS secret pasted right after its key id ("AKIA... /
			// wJal...", "id: AKIA..., secret: ...") carries no label;
			// the id (or its marker, the data rule having run) is one.
			info:    RuleInfo{"aws-secret-after-key-id", "AWS secret access keys (40 characters) right after an AWS access key id, without a label", true},
			pattern: `(?:(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}|\[REDACTED:aws-access-(?:token|key-id)\])["']?(?:\s*[/:,;|=]\s*|\s+)["']?(?:(?i)(?:secret|aws_secret_access_key|secret_access_key|key)["']?\s*[:=]\s*["']?)?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9+=]|$)`,
			group:   1,
			quick:   []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T", "[REDACTED:aws-access-"},
		},
		{
			// HTTP credentials: Basic user:password in base64, Bearer
			// and other schemes' tokens. A placeholder (YOUR_TOKEN) has
			// neither a digit nor mixed case and is kept.
			info:     RuleInfo{"authorization-header", "credentials in Authorization headers (Basic, Bearer, Token, Digest, ...), also in JSON and code", true},
			pattern:  `(?i)\bauthorization["']?\s*[:=]\s*["']?(?:basic|bearer|token|digest|negotiate|ntlm|apikey|api-key|sso-key)\s+([A-Za-z0-9+/=._~-]{8,})`,
			group:    1,
			quick:    []string{"authorization"},
			fold:     true,
			validate: digitOrMixedCase,
		},
		{
			info:    RuleInfo{"azure-storage-key", "Azure storage account keys and shared access keys in connection strings (AccountKey=, SharedAccessKey=)", true},
			pattern: `(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})`,
			group:   1,
			quick:   []string{"accountkey", "sharedaccesskey"},
			fold:    true,
		},
		{
			info:    RuleInfo{"url-password", "passwords in URLs (scheme://user:PASSWORD@host); only the password is replaced", true},
			pattern: `://[^:/@\s"'<>]*:([^@\s/"'<>]+)@`,
			group:   1,
			quick:   []string{"://"},
		},
		{
			info:    RuleInfo{"email", "email addresses", false},
			pattern: `\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b`,
			quick:   []string{"@"},
		},
		{
			info:     RuleInfo{"card-number", "payment card numbers (13 to 19 digits, optional spaces or dashes) that pass the Luhn check", false},
			pattern:  `\b\d(?:[ -]?\d){12,18}\b`,
			validate: luhnValid,
		},
		{
			info:    RuleInfo{"password-assignment", "values assigned to password/passwd/pwd/secret/token/api_key labels (8+ characters)", false},
			pattern: `(?i)\b(?:password|passwd|pwd|secret|token|api[_-]?key)["']?\s*[:=]\s*["']?([^\s"',;]{8,})`,
			group:   1,
		},
	}
}

// aliases are rule names of earlier cairn versions that the rule data now
// covers, accepted in Options.Enable and Options.Disable.
func aliases(set *ruleSet) map[string][]string {
	al := map[string][]string{
		"aws-access-key": {"aws-access-token"},
		"github-token":   {"github-pat", "github-oauth", "github-app-token", "github-refresh-token", "github-fine-grained-pat"},
		"stripe-key":     {"stripe-access-token"},
	}
	for _, r := range set.rules {
		if strings.HasPrefix(r.info.Name, "slack-") {
			al["slack-token"] = append(al["slack-token"], r.info.Name)
		}
	}
	return al
}

// BuiltinRules lists the built-in rules in the order they run: cairn's own
// private-key rule, the rule data (gitleaks' default rules, less the ones
// cairn's own replace), then cairn's other own rules.
func BuiltinRules() []RuleInfo {
	var out []RuleInfo
	own := builtins()
	out = append(out, own[0].info)
	if set, err := loadRuleSet(); err == nil {
		for _, r := range set.rules {
			if !ownName(own, r.info.Name) {
				out = append(out, r.info)
			}
		}
	}
	for _, b := range own[1:] {
		out = append(out, b.info)
	}
	return out
}

func ownName(own []builtin, name string) bool {
	for _, b := range own {
		if b.info.Name == name {
			return true
		}
	}
	return false
}

// validRuleName reports whether s is 1-64 lower-case letters, digits and
// '-', starting with a letter or digit. It is checked by hand: compiling
// the equivalent regexp at package init cost every process start time.
func validRuleName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' && i > 0) {
			return false
		}
	}
	return true
}

// New builds a Redactor from opts, which it copies and validates. The rule
// data is parsed when opts names rules (to check the names) or on the
// first Redact; its patterns compile when a text first contains one of
// their keywords.
func New(opts Options) (*Redactor, error) {
	bs := builtins()
	r := &Redactor{}
	needData := len(opts.Enable)+len(opts.Disable)+len(opts.Custom) > 0
	var set *ruleSet
	var al map[string][]string
	if needData {
		var err error
		if set, err = loadRuleSet(); err != nil {
			return nil, err
		}
		al = aliases(set)
	}
	known := func(n string) bool {
		if ownName(bs, n) {
			return true
		}
		_, isData := set.byID[n]
		_, isAlias := al[n]
		return isData || isAlias
	}
	expand := func(names []string, what string) (map[string]bool, error) {
		m := make(map[string]bool)
		for _, n := range names {
			if !known(n) {
				return nil, fmt.Errorf("%w: %s: unknown built-in rule %q", ErrInvalidRule, what, n)
			}
			m[n] = true
			for _, a := range al[n] {
				m[a] = true
			}
		}
		return m, nil
	}
	enable, err := expand(opts.Enable, "enable")
	if err != nil {
		return nil, err
	}
	disable, err := expand(opts.Disable, "disable")
	if err != nil {
		return nil, err
	}
	for i, b := range bs {
		on := (b.info.Default && !opts.None) || enable[b.info.Name]
		if !on || disable[b.info.Name] {
			continue
		}
		re := regexp.MustCompile(b.pattern)
		r.rules = append(r.rules, rule{name: b.info.Name, re: re, group: b.group, validate: b.validate, quick: b.quick, fold: b.fold, left: b.left, first: i == 0})
	}
	r.selectData = func(set *ruleSet) []*dataRule {
		var out []*dataRule
		for _, d := range set.rules {
			on := (d.info.Default && !opts.None) || enable[d.info.Name]
			if on && !disable[d.info.Name] && !ownName(bs, d.info.Name) {
				out = append(out, d)
			}
		}
		return out
	}
	seen := make(map[string]bool)
	for _, c := range opts.Custom {
		if !validRuleName(c.Name) {
			return nil, fmt.Errorf("%w: custom rule name %q: want lower-case letters, digits and '-'", ErrInvalidRule, c.Name)
		}
		if known(c.Name) || seen[c.Name] {
			return nil, fmt.Errorf("%w: custom rule name %q is already used", ErrInvalidRule, c.Name)
		}
		seen[c.Name] = true
		re, err := regexp.Compile(c.Pattern)
		if err != nil {
			return nil, fmt.Errorf("%w: custom rule %q: %w", ErrInvalidRule, c.Name, err)
		}
		if c.Group < 0 || c.Group > re.NumSubexp() {
			return nil, fmt.Errorf("%w: custom rule %q: group %d does not exist (pattern has %d)", ErrInvalidRule, c.Name, c.Group, re.NumSubexp())
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("%w: custom rule %q matches the empty string", ErrInvalidRule, c.Name)
		}
		r.rules = append(r.rules, rule{name: c.Name, re: re, group: c.Group})
	}
	return r, nil
}

// data returns the Redactor's data rules, selecting them on first use.
func (r *Redactor) data() *dataRules {
	r.dataOnce.Do(func() {
		set, err := loadRuleSet()
		if err != nil { // the embedded data parses (tested); nothing to run otherwise
			r.dataSel = &dataRules{set: &ruleSet{}}
			return
		}
		r.dataSel = newDataRules(set, r.selectData(set))
	})
	return r.dataSel
}

// Rules returns the names of the active rules in the order they run.
func (r *Redactor) Rules() []string {
	var out []string
	for _, ru := range r.rules {
		if ru.first {
			out = append(out, ru.name)
		}
	}
	for _, d := range r.data().rules {
		out = append(out, d.info.Name)
	}
	for _, ru := range r.rules {
		if !ru.first {
			out = append(out, ru.name)
		}
	}
	return out
}

// Redact returns s with every secret replaced by its rule's marker, and the
// count per rule. A nil Redactor returns s unchanged.
func (r *Redactor) Redact(s string) (string, Report) {
	if r == nil {
		return s, Report{}
	}
	return r.redact(s, markerOf)
}

// redact is Redact with the replacement of each secret made by mark.
func (r *Redactor) redact(s string, mark markFunc) (string, Report) {
	var rep Report
	s = r.redactOwn(s, true, &rep, mark)
	s = r.data().redact(s, &rep, mark)
	s = r.redactOwn(s, false, &rep, mark)
	return s, rep
}

// markFunc returns the text that replaces secret, found by rule.
type markFunc func(rule, secret string) string

func markerOf(rule, _ string) string { return Marker(rule) }

// RedactName returns the name s (a channel id, an agent, a project, a
// type: letters, digits and ".", "_", "-", "/", ":") with every secret in
// it replaced by "redacted-RULE-HASH", HASH being the first 8 hex digits
// of the secret's SHA-256: the result is still a name, and the same secret
// always gives the same name, so writes to a channel named after a secret
// keep landing in one channel.
func (r *Redactor) RedactName(s string) (string, Report) {
	if r == nil {
		return s, Report{}
	}
	return r.redact(s, nameMarker)
}

func nameMarker(rule, secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "redacted-" + rule + "-" + hex.EncodeToString(sum[:4])
}

// redactOwn runs cairn's own rules: the ones that run before the rule data
// (first), or the rest.
func (r *Redactor) redactOwn(s string, first bool, rep *Report, mark markFunc) string {
	for i := range r.rules {
		ru := &r.rules[i]
		if ru.first != first || !ru.mayMatch(s) {
			continue
		}
		var n int
		s, n = ru.apply(s, mark)
		if n > 0 {
			if rep.Counts == nil {
				rep.Counts = make(map[string]int)
			}
			rep.Counts[ru.name] += n
		}
	}
	return s
}

func (ru *rule) mayMatch(s string) bool {
	if len(ru.quick) == 0 {
		return true
	}
	if ru.fold {
		s = strings.ToLower(s)
	}
	for _, q := range ru.quick {
		if strings.Contains(s, q) {
			return true
		}
	}
	return false
}

func (ru *rule) apply(s string, mark markFunc) (string, int) {
	var spans []span
	last := 0
	for pos := 0; pos <= len(s); {
		loc := ru.re.FindStringSubmatchIndex(s[pos:])
		if loc == nil {
			break
		}
		mStart, mEnd := pos+loc[0], pos+loc[1]
		if ru.left && mStart > 0 && isWordByte(s[mStart-1]) {
			// Not at a word start: look again from the next byte, where a
			// real secret may begin (e.g. after a '-' inside this match).
			pos = mStart + 1
			continue
		}
		next := mEnd
		if next == mStart {
			next++
		}
		start, end := loc[2*ru.group], loc[2*ru.group+1]
		pos = next
		if start < 0 {
			continue
		}
		start, end = start+mStart-loc[0], end+mStart-loc[0]
		sp := s[start:end]
		if start < last || strings.HasPrefix(sp, markerPrefix) {
			continue // overlaps a replaced span, or already redacted
		}
		if ru.validate != nil && !ru.validate(sp) {
			continue
		}
		spans = append(spans, span{start, end})
		last = end
	}
	return replaceSpans(s, ru.name, spans, mark)
}

// span is a byte range [start, end) of a text.
type span struct{ start, end int }

// replaceSpans replaces the ascending, disjoint spans of s, secrets found
// by rule, by their marks and returns the result and the number of spans.
func replaceSpans(s, rule string, spans []span, mark markFunc) (string, int) {
	if len(spans) == 0 {
		return s, 0
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(mark(rule, s[sp.start:sp.end]))
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String(), len(spans)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// digitOrMixedCase reports whether s has a digit or both cases: a
// credential, not a placeholder word.
func digitOrMixedCase(s string) bool {
	var up, low bool
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			return true
		case r >= 'A' && r <= 'Z':
			up = true
		case r >= 'a' && r <= 'z':
			low = true
		}
	}
	return up && low
}

// luhnValid reports whether the digits of s (ignoring spaces and dashes)
// number 13 to 19 and pass the Luhn checksum, and are not all the same digit.
func luhnValid(s string) bool {
	var digits []int
	for _, r := range s {
		if unicode.IsDigit(r) && r <= '9' {
			digits = append(digits, int(r-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	same := true
	for _, d := range digits {
		if d != digits[0] {
			same = false
		}
	}
	if same {
		return false
	}
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := digits[i]
		if (len(digits)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}
