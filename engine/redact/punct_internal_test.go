package redact

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// punctuations are what a token sits before in prose, code and logs: a
// secret is redacted the same before each of them.
var punctuations = []struct{ name, before, after string }{
	{"space", "", " and more"},
	{"period", "", ". Next sentence"},
	{"comma", "", ", then"},
	{"paren", "(", ")"},
	{"slash", "", "/path"},
	{"end", "", ""},
	{"double quotes", `"`, `"`},
	{"single quotes", "'", "'"},
	{"backticks", "`", "`"},
	{"semicolon", "", ";"},
	{"newline", "", "\nnext line"},
}

// TestRedactTokenShapesBeforePunctuation is a corpus of token shapes, one
// generated from each rule of the data whose pattern ends at a token
// boundary (150+) and the shapes found surviving before punctuation (Stripe,
// Google, JWT, npm, Hugging Face, SendGrid, DigitalOcean, Databricks,
// Authorization headers, Azure keys, an AWS secret after its key id), each
// followed by every punctuation above: the token never survives.
func TestRedactTokenShapesBeforePunctuation(t *testing.T) {
	rng := sampleRand(t)
	set, err := loadRuleSet()
	if err != nil {
		t.Fatal(err)
	}
	red, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	global, _ := set.globalAllow()
	type shape struct{ name, text, secret string }
	shapes := []shape{
		{"stripe", "key sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc", "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc"},
		{"google", "key AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"},
		{"jwt", "token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
		{"npm", "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"},
		{"huggingface", "hf_" + "jQwErTyUiOpAsDfGhJkLzXcVbNmQwErTyU", "hf_" + "jQwErTyUiOpAsDfGhJkLzXcVbNmQwErTyU"},
		{"sendgrid", "SG." + "aB3dE6gH9jK2mN5pQ8sT1v.wX4zA7cD0fG3iJ6lM9oP2rS5uV8xY1bE4hK7nQ0tW3z", "SG." + "aB3dE6gH9jK2mN5pQ8sT1v.wX4zA7cD0fG3iJ6lM9oP2rS5uV8xY1bE4hK7nQ0tW3z"},
		{"digitalocean", "dop_v1_" + "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a393f2a9c1e8b7d6a5f4e3d2c1b", "dop_v1_" + "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a393f2a9c1e8b7d6a5f4e3d2c1b"},
		{"databricks", "dapi" + "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d", "dapi" + "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d"},
		{"authorization basic", "Authorization: Basic " + "dXNlcm5hbWU6cGFzc3dvcmQxMjM=", "dXNlcm5hbWU6cGFzc3dvcmQxMjM="},
		{"authorization bearer", "Authorization: Bearer " + "a8Kd93jfLq0ZmX7vNc2BwT5yRp1sHg4eUo6iYt9Q", "a8Kd93jfLq0ZmX7vNc2BwT5yRp1sHg4eUo6iYt9Q"},
		{"bearer header in json", `{"authorization": "Bearer ` + "a8Kd93jfLq0ZmX7vNc2BwT5yRp1sHg4eUo6iYt9Q", "a8Kd93jfLq0ZmX7vNc2BwT5yRp1sHg4eUo6iYt9Q"},
		{"azure account key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="},
		{"aws secret after its id", "AKIA" + "QYLPMN5HHHFPZAM2 / " + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"},
	}
	const boundary = `(?:[\x60'"\s;]|\\[nr]|$)`
	for _, r := range set.rules {
		if !r.info.Default || ownName(builtins(), r.info.Name) || !strings.HasSuffix(r.pattern, boundary) {
			continue
		}
		if err := r.compile(); err != nil {
			t.Fatal(err)
		}
		re, err := syntax.Parse(strings.TrimSuffix(r.pattern, boundary), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		re = re.Simplify()
		for try := 0; try < 200; try++ {
			var b strings.Builder
			generate(&b, re, rng)
			text := withKeyword(b.String(), r.keywords)
			if secret := findSecret(r, text+" ", &global); secret != "" && strings.HasSuffix(text, secret) {
				shapes = append(shapes, shape{r.info.Name, text, secret})
				break
			}
		}
	}
	if len(shapes) < 50 {
		t.Fatalf("%d token shapes, want 50 or more", len(shapes))
	}
	failed := map[string][]string{}
	for _, s := range shapes {
		for _, p := range punctuations {
			in := p.before + s.text + p.after
			if out, _ := red.Redact(in); strings.Contains(out, s.secret) {
				failed[s.name] = append(failed[s.name], p.name)
				if len(failed[s.name]) == 1 {
					t.Logf("%s before %s: %q -> %q", s.name, p.name, in, out)
				}
			}
		}
	}
	for name, ps := range failed {
		t.Errorf("%s survives before %v", name, ps)
	}
	t.Logf("%d token shapes x %d punctuations, %d shapes survive somewhere", len(shapes), len(punctuations), len(failed))
}
