package engine

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Breadcrumb kinds. Files, commits, issues and prs are Breadcrumbs'
// fields; every other kind is in Breadcrumbs.Other. The Claude-Slack
// design's kinds (modified_files, created_files, deleted_files, commits,
// pull_requests, issues, tests, documentation, config_files, logs,
// external_refs) and the implementation plan's (files with path:45-89 line
// ranges, commits, decisions, patterns) are checked for form here; a kind
// of neither is kept as given, its values only checked to be single lines.
var breadcrumbForms = map[string]func(string) string{
	"files":          checkPathRef,
	"modified_files": checkPathRef,
	"created_files":  checkPathRef,
	"deleted_files":  checkPathRef,
	"config_files":   checkPathRef,
	"tests":          checkPathRef,
	"commits":        checkCommitRef,
	"issues":         checkIssueRef,
	"prs":            checkIssueRef,
	"pull_requests":  checkIssueRef,
	"external_refs":  checkURLRef,
	"documentation":  checkPathOrURLRef,
	"logs":           checkPathOrURLRef,
}

// BreadcrumbKinds lists the kinds whose values are checked for form (any
// other kind is accepted as given).
func BreadcrumbKinds() []string {
	ks := make([]string, 0, len(breadcrumbForms)+2)
	for k := range breadcrumbForms {
		ks = append(ks, k)
	}
	ks = append(ks, "decisions", "patterns")
	slices.Sort(ks)
	return ks
}

// maxBreadcrumbBytes bounds one breadcrumb value.
const maxBreadcrumbBytes = 4096

var (
	breadcrumbKindRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	commitRE         = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)
	// #12, 12, GH-12, owner/repo#12, PROJ-12
	issueRE     = regexp.MustCompile(`^(#?[0-9]+|[A-Za-z][A-Za-z0-9_-]*-[0-9]+|[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?#[0-9]+)$`)
	lineRangeRE = regexp.MustCompile(`^([0-9]+)(-([0-9]+))?$`)
)

// checkBreadcrumb checks value as a breadcrumb of kind and returns the rule
// it breaks ("" when it is fine).
func checkBreadcrumb(kind, value string) string {
	switch {
	case strings.TrimSpace(value) == "":
		return "must not be empty"
	case !utf8.ValidString(value):
		return "must be valid UTF-8"
	case len(value) > maxBreadcrumbBytes:
		return "must be at most " + strconv.Itoa(maxBreadcrumbBytes) + " bytes"
	case strings.ContainsAny(value, "\x00\n\r"):
		return "must be one line"
	}
	if f := breadcrumbForms[kind]; f != nil {
		if rule := f(value); rule != "" {
			return rule + ", got " + strconv.Quote(value)
		}
	}
	return ""
}

// SplitPathRef splits a file breadcrumb into its path and line range:
// "engine/store.go:45-89" is ("engine/store.go", 45, 89), "a.go:7" is
// ("a.go", 7, 7) and "a.go" is ("a.go", 0, 0). ok is false for a range
// that is not 1 <= from <= to.
func SplitPathRef(ref string) (path string, from, to int, ok bool) {
	i := strings.LastIndexByte(ref, ':')
	if i <= 0 {
		return ref, 0, 0, true
	}
	m := lineRangeRE.FindStringSubmatch(ref[i+1:])
	if m == nil {
		return ref, 0, 0, true // a colon in the path itself
	}
	from, err1 := strconv.Atoi(m[1])
	to, err2 := from, error(nil)
	if m[3] != "" {
		to, err2 = strconv.Atoi(m[3])
	}
	if err1 != nil || err2 != nil || from < 1 || to < from {
		return ref[:i], 0, 0, false
	}
	return ref[:i], from, to, true
}

func checkPathRef(v string) string {
	path, _, _, ok := SplitPathRef(v)
	if !ok {
		return "a line range is path:N or path:N-M with 1 <= N <= M"
	}
	if strings.TrimSpace(path) == "" {
		return "must name a path before the line range"
	}
	return ""
}

func checkCommitRef(v string) string {
	if !commitRE.MatchString(v) {
		return "must be a commit hash (4 to 64 hex digits)"
	}
	return ""
}

func checkIssueRef(v string) string {
	if issueRE.MatchString(v) || checkURLRef(v) == "" {
		return ""
	}
	return "must be a number (12, #12), KEY-12, owner/repo#12 or an http(s) URL"
}

func checkURLRef(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http(s) URL"
	}
	return ""
}

func checkPathOrURLRef(v string) string {
	if strings.Contains(v, "://") {
		return checkURLRef(v)
	}
	return checkPathRef(v)
}

// MarshalJSON writes the breadcrumbs as one object: files, commits, issues
// and prs first, then the other kinds in name order.
func (b Breadcrumbs) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	add := func(kind string, vals []string) error {
		if len(vals) == 0 {
			return nil
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(kind)
		v, err := json.Marshal(vals)
		if err != nil {
			return err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
		return nil
	}
	for _, kv := range []struct {
		k string
		v []string
	}{{"files", b.Files}, {"commits", b.Commits}, {"issues", b.Issues}, {"prs", b.PRs}} {
		if err := add(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	kinds := make([]string, 0, len(b.Other))
	for k := range b.Other {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		if err := add(k, b.Other[k]); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads an object of string arrays, any kinds.
func (b *Breadcrumbs) UnmarshalJSON(data []byte) error {
	var m map[string][]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*b = Breadcrumbs{}
	for k, v := range m {
		b.set(k, v)
	}
	return nil
}

// set puts vals under kind.
func (b *Breadcrumbs) set(kind string, vals []string) {
	switch kind {
	case "files":
		b.Files = vals
	case "commits":
		b.Commits = vals
	case "issues":
		b.Issues = vals
	case "prs":
		b.PRs = vals
	default:
		if len(vals) == 0 {
			return
		}
		if b.Other == nil {
			b.Other = map[string][]string{}
		}
		b.Other[kind] = vals
	}
}

// check checks every breadcrumb for the form of its kind.
func (b Breadcrumbs) check() error {
	kinds := map[string][]string{"files": b.Files, "commits": b.Commits, "issues": b.Issues, "prs": b.PRs}
	for k, v := range b.Other {
		kinds[k] = v
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range kinds[k] {
			if rule := checkBreadcrumb(k, v); rule != "" {
				return invalid("breadcrumbs."+k, "%s", rule)
			}
		}
	}
	return nil
}
