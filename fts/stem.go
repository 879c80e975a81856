package fts

// The Porter stemmer of FTS5's 'porter' tokenizer, written from the
// algorithm (M. F. Porter, 1980, with the revisions of Porter's reference
// implementation: "bli" -> "ble", "logi" -> "log") and checked against
// FTS5's own output by TestTokenizeMatchesFTS5. It works on bytes: bytes
// other than a, e, i, o, u (and y after a consonant) are consonants, so a
// token with non-ASCII letters is stemmed exactly as FTS5 stems it.

// porterMaxToken: tokens longer than this (in bytes), or shorter than 3,
// are not stemmed (FTS5_PORTER_MAX_TOKEN).
const porterMaxToken = 64

func isVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || yIsVowel && c == 'y'
}

// gobbleVC skips the leading consonants, then vowels, then the first
// consonant after them (one VC in Porter's [C](VC){m}[V]) and returns the
// index just after it, or 0 when there is no VC.
func gobbleVC(s []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(s); i++ {
		cons = !isVowel(s[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(s); i++ {
		cons = !isVowel(s[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

func mGt0(s []byte) bool { return gobbleVC(s, false) != 0 }

func mGt1(s []byte) bool {
	n := gobbleVC(s, false)
	return n != 0 && gobbleVC(s[n:], true) != 0
}

func mEq1(s []byte) bool {
	n := gobbleVC(s, false)
	return n != 0 && gobbleVC(s[n:], true) == 0
}

// oStar: the stem ends consonant-vowel-consonant, the last not w, x or y.
func oStar(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	switch s[len(s)-1] {
	case 'w', 'x', 'y':
		return false
	}
	mask := 0
	cons := false
	for _, c := range s {
		cons = !isVowel(c, cons)
		mask <<= 1
		if cons {
			mask |= 1
		}
	}
	return mask&7 == 5
}

// hasVowel: Porter's *v* (y counts as a vowel anywhere but first).
func hasVowel(s []byte) bool {
	for i, c := range s {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}

type rule struct {
	suffix, repl string
}

// hasSuffix reports whether s ends with suf and has at least one byte
// before it.
func hasSuffix(s []byte, suf string) bool {
	if len(s) <= len(suf) {
		return false
	}
	return string(s[len(s)-len(suf):]) == suf
}

// applyRules applies the first rule whose suffix s has (and only that
// one), replacing it when cond holds for the stem before it.
func applyRules(s []byte, rules []rule, cond func([]byte) bool) []byte {
	for _, r := range rules {
		if hasSuffix(s, r.suffix) {
			stem := s[:len(s)-len(r.suffix)]
			ok := cond(stem)
			if r.suffix == "ion" && r.repl == "" { // step 4: (m>1 and (*S or *T))
				ok = ok && (stem[len(stem)-1] == 's' || stem[len(stem)-1] == 't')
			}
			if ok {
				return append(stem, r.repl...)
			}
			return s
		}
	}
	return s
}

var step2Rules = []rule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"logi", "log"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
}

var step3Rules = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

// step4Rules: "ion" also needs the stem to end in s or t (applyRules).
var step4Rules = []rule{
	{"al", ""}, {"ance", ""}, {"ence", ""}, {"er", ""}, {"ic", ""}, {"able", ""}, {"ible", ""},
	{"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""}, {"ion", ""}, {"ou", ""}, {"ism", ""},
	{"ate", ""}, {"iti", ""}, {"ous", ""}, {"ive", ""}, {"ize", ""},
}

// porterStem returns the stem of the lower-cased token tok, reusing buf.
func porterStem(tok []byte, buf []byte) []byte {
	if len(tok) > porterMaxToken || len(tok) < 3 {
		return append(buf[:0], tok...)
	}
	s := append(buf[:0], tok...)

	// Step 1a.
	if s[len(s)-1] == 's' {
		switch {
		case s[len(s)-2] == 'e':
			if len(s) > 4 && s[len(s)-4] == 's' && s[len(s)-3] == 's' || len(s) > 3 && s[len(s)-3] == 'i' {
				s = s[:len(s)-2]
			} else {
				s = s[:len(s)-1]
			}
		case s[len(s)-2] != 's':
			s = s[:len(s)-1]
		}
	}

	// Step 1b.
	extra := false
	switch {
	case hasSuffix(s, "eed"):
		if mGt0(s[:len(s)-3]) {
			s = s[:len(s)-1]
		}
	case hasSuffix(s, "ed"):
		if hasVowel(s[:len(s)-2]) {
			s, extra = s[:len(s)-2], true
		}
	case hasSuffix(s, "ing"):
		if hasVowel(s[:len(s)-3]) {
			s, extra = s[:len(s)-3], true
		}
	}
	if extra {
		switch {
		case hasSuffix(s, "at"), hasSuffix(s, "bl"), hasSuffix(s, "iz"):
			s = append(s, 'e')
		default:
			n := len(s)
			c := s[n-1]
			if n >= 2 && !isVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == s[n-2] {
				s = s[:n-1]
			} else if mEq1(s) && oStar(s) {
				s = append(s, 'e')
			}
		}
	}

	// Step 1c.
	if s[len(s)-1] == 'y' && hasVowel(s[:len(s)-1]) {
		s[len(s)-1] = 'i'
	}

	// Steps 2-4.
	s = applyRules(s, step2Rules, mGt0)
	s = applyRules(s, step3Rules, mGt0)
	s = applyRules(s, step4Rules, mGt1)

	// Step 5a.
	if s[len(s)-1] == 'e' {
		stem := s[:len(s)-1]
		if mGt1(stem) || mEq1(stem) && !oStar(stem) {
			s = stem
		}
	}
	// Step 5b.
	if len(s) > 1 && s[len(s)-1] == 'l' && s[len(s)-2] == 'l' && mGt1(s[:len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
