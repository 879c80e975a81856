package redact_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/engine/redact"
)

// Test secrets are assembled from pieces so that no scanner mistakes this
// file for a leak; none of them is a live credential.
var (
	pemRSA = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF0qkq8e9bJ9r\nc2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n-----END RSA PRIVATE KEY-----"
	pemSSH = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----"
	// truncated: no END line (a paste cut short).
	pemCut     = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
	awsID      = "AKIA" + "QYLPMN5HHHFPZAM2"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	gcpKey     = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	saKeyID    = "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"
	ghp        = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	ghPAT      = "github_pat_" + "U8JZpDE0iGXlD6gNCFbaEPFjbD0kH8Oool8DklZD_OCj2ISaJiHkTj0rLGlkoMXGjtEkDnNfribxUdl7dX"
	slackBot   = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackHook  = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	openaiKey  = "sk-" + "proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	anthropic  = "sk-" + "ant-api03-Xy7Qw2Er9Ty4Ui1Op6As3Df8Gh5Jk0Lz"
	stripeLive = "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc"
	jwt        = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	cardVisa   = "4111 1111 1111 1111"
	cardNoLuhn = "4111 1111 1111 1112"
	dbPassword = "s3cr3tP4ss"
	emailAddr  = "jane.doe@example.com"
)

func mustNew(t *testing.T, opts redact.Options) *redact.Redactor {
	t.Helper()
	r, err := redact.New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	return r
}

func TestRedactDefaults(t *testing.T) {
	r := mustNew(t, redact.Options{})
	tests := []struct {
		name   string
		in     string
		want   string
		counts map[string]int
	}{
		{"rsa key block", "key:\n" + pemRSA + "\nend", "key:\n[REDACTED:private-key]\nend", map[string]int{"private-key": 1}},
		{"openssh key", pemSSH, "[REDACTED:private-key]", map[string]int{"private-key": 1}},
		{"truncated key", "paste: " + pemCut, "paste: [REDACTED:private-key]", map[string]int{"private-key": 1}},
		{"key with escaped newlines in json", `{"private_key": "` + strings.ReplaceAll(pemRSA, "\n", `\n`) + `\n"}`, `{"private_key": "[REDACTED:private-key]\n"}`, map[string]int{"private-key": 1}},
		{"aws id", "export AWS_ACCESS_KEY_ID=" + awsID, "export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-token]", map[string]int{"aws-access-token": 1}},
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + awsSecret, "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]", map[string]int{"aws-secret-key": 1}},
		{"aws secret credentials file", "aws_secret_access_key = " + awsSecret + "\n", "aws_secret_access_key = [REDACTED:aws-secret-key]\n", map[string]int{"aws-secret-key": 1}},
		{"aws secret json", `"SecretAccessKey": "` + awsSecret + `"`, `"SecretAccessKey": "[REDACTED:aws-secret-key]"`, map[string]int{"aws-secret-key": 1}},
		{"gcp api key", `"apiKey": "` + gcpKey + `",`, `"apiKey": "[REDACTED:gcp-api-key]",`, map[string]int{"gcp-api-key": 1}},
		{"gcp service account id", `"private_key_id": "` + saKeyID + `",`, `"private_key_id": "[REDACTED:gcp-service-account]",`, map[string]int{"gcp-service-account": 1}},
		{"github classic", "token " + ghp + " used", "token [REDACTED:github-pat] used", map[string]int{"github-pat": 1}},
		{"github fine grained", "GH=" + ghPAT, "GH=[REDACTED:github-fine-grained-pat]", map[string]int{"github-fine-grained-pat": 1}},
		{"slack bot", "SLACK_TOKEN='" + slackBot + "'", "SLACK_TOKEN='[REDACTED:slack-bot-token]'", map[string]int{"slack-bot-token": 1}},
		{"slack webhook", "curl -X POST " + slackHook, "curl -X POST [REDACTED:slack-webhook-url]", map[string]int{"slack-webhook-url": 1}},
		{"openai project key", "OPENAI_API_KEY=" + openaiKey, "OPENAI_API_KEY=[REDACTED:openai-key]", map[string]int{"openai-key": 1}},
		{"anthropic key", "key: " + anthropic + ".", "key: [REDACTED:openai-key].", map[string]int{"openai-key": 1}},
		{"stripe", "Stripe.api_key = '" + stripeLive + "'", "Stripe.api_key = '[REDACTED:stripe-access-token]'", map[string]int{"stripe-access-token": 1}},
		{"jwt bearer", "Authorization: Bearer " + jwt, "Authorization: Bearer [REDACTED:jwt]", map[string]int{"jwt": 1}},
		{"postgres url", "postgres://app:" + dbPassword + "@db.internal:5432/prod", "postgres://app:[REDACTED:url-password]@db.internal:5432/prod", map[string]int{"url-password": 1}},
		{"https basic auth", "git clone https://bob:" + dbPassword + "@git.example.com/r.git", "git clone https://bob:[REDACTED:url-password]@git.example.com/r.git", map[string]int{"url-password": 1}},
		{"several", ghp + " and " + ghp + " and " + jwt, "[REDACTED:github-pat] and [REDACTED:github-pat] and [REDACTED:jwt]", map[string]int{"github-pat": 2, "jwt": 1}},
		{"key after dash", "my-" + openaiKey, "my-[REDACTED:openai-key]", map[string]int{"openai-key": 1}},
		{"key inside a rejected match", "xsk-aaaaaaaaaaaaaaaaaaaaaaaa " + openaiKey, "xsk-aaaaaaaaaaaaaaaaaaaaaaaa [REDACTED:openai-key]", map[string]int{"openai-key": 1}},
		// Negatives: text that looks close but is not a secret.
		{"plain prose", "We decided to use SQLite in WAL mode.", "We decided to use SQLite in WAL mode.", nil},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----", nil},
		{"url without password", "see https://user@example.com:8080/path and http://localhost:8080/x", "see https://user@example.com:8080/path and http://localhost:8080/x", nil},
		{"kebab-case sk-", "install sk-learn-compatible-wrapper-package now", "install sk-learn-compatible-wrapper-package now", nil},
		{"short sk-", "sk-abc", "sk-abc", nil},
		{"ghp too short", "ghp_abc123", "ghp_abc123", nil},
		{"uuid", "conversation 550e8400-e29b-41d4-a716-446655440000", "conversation 550e8400-e29b-41d4-a716-446655440000", nil},
		{"git sha", "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", nil},
		{"email off by default", "mail " + emailAddr, "mail " + emailAddr, nil},
		{"card off by default", "card " + cardVisa, "card " + cardVisa, nil},
		{"aws-like lowercase", "akiaiosfodnn7example", "akiaiosfodnn7example", nil},
		{"already redacted", "x [REDACTED:github-token] y", "x [REDACTED:github-token] y", nil},
		{"marker in url password", "postgres://app:[REDACTED:url-password]@db", "postgres://app:[REDACTED:url-password]@db", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, rep := r.Redact(tc.in)
			if got != tc.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if len(rep.Counts) != len(tc.counts) {
				t.Errorf("counts = %v, want %v", rep.Counts, tc.counts)
			}
			for k, v := range tc.counts {
				if rep.Counts[k] != v {
					t.Errorf("counts[%s] = %d, want %d (all %v)", k, rep.Counts[k], v, rep.Counts)
				}
			}
			// Idempotent: a second pass changes nothing and counts nothing.
			again, rep2 := r.Redact(got)
			if again != got || rep2.Total() != 0 {
				t.Errorf("second pass changed %q to %q (%v)", got, again, rep2)
			}
		})
	}
}

func TestRedactOptional(t *testing.T) {
	r := mustNew(t, redact.Options{Enable: []string{"email", "card-number", "password-assignment"}})
	tests := []struct{ in, want string }{
		{"mail " + emailAddr + " now", "mail [REDACTED:email] now"},
		{"card " + cardVisa + ".", "card [REDACTED:card-number]."},
		{"card 4111-1111-1111-1111", "card [REDACTED:card-number]"},
		{"amex 378282246310005", "amex [REDACTED:card-number]"},
		{"bad luhn " + cardNoLuhn, "bad luhn " + cardNoLuhn},
		{"phone 0000000000000", "phone 0000000000000"},
		{"short 4111111", "short 4111111"},
		{"password: hunter2hunter2", "password: [REDACTED:password-assignment]"},
		{`"api_key": "0123456789abcdef"`, `"api_key": "[REDACTED:password-assignment]"`},
		{"password: short", "password: short"},
	}
	for _, tc := range tests {
		got, _ := r.Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOptions(t *testing.T) {
	r := mustNew(t, redact.Options{Disable: []string{"jwt"}})
	if got, _ := r.Redact(jwt); got != jwt {
		t.Errorf("disabled jwt rule still redacts: %q", got)
	}
	r = mustNew(t, redact.Options{None: true, Custom: []redact.Rule{{Name: "ticket", Pattern: `INTERNAL-(\d{4})`, Group: 1}}})
	got, rep := r.Redact("see INTERNAL-1234 and " + ghp)
	if want := "see INTERNAL-[REDACTED:ticket] and " + ghp; got != want {
		t.Errorf("custom rule: got %q, want %q", got, want)
	}
	if rep.Counts["ticket"] != 1 || rep.Total() != 1 || rep.String() != "ticket=1" {
		t.Errorf("report = %v", rep)
	}
	if names := r.Rules(); len(names) != 1 || names[0] != "ticket" {
		t.Errorf("Rules() = %v", names)
	}
	var nilR *redact.Redactor
	if got, rep := nilR.Redact(ghp); got != ghp || rep.Total() != 0 {
		t.Errorf("nil redactor changed text")
	}

	bad := []redact.Options{
		{Enable: []string{"nope"}},
		{Disable: []string{"nope"}},
		{Custom: []redact.Rule{{Name: "Bad Name", Pattern: "x"}}},
		{Custom: []redact.Rule{{Name: "jwt", Pattern: "x"}}},
		{Custom: []redact.Rule{{Name: "a", Pattern: "("}}},
		{Custom: []redact.Rule{{Name: "a", Pattern: "x", Group: 1}}},
		{Custom: []redact.Rule{{Name: "a", Pattern: "x*"}}},
		{Custom: []redact.Rule{{Name: "a", Pattern: "x"}, {Name: "a", Pattern: "y"}}},
	}
	for _, o := range bad {
		if _, err := redact.New(o); !errors.Is(err, redact.ErrInvalidRule) {
			t.Errorf("New(%+v) = %v, want ErrInvalidRule", o, err)
		}
	}
	if len(redact.BuiltinRules()) < 12 {
		t.Errorf("BuiltinRules() = %d rules", len(redact.BuiltinRules()))
	}
}

// secretKinds builds a secret of a given kind from arbitrary bytes, mapping
// them into the kind's alphabet so every fuzz input yields a real positive.
func secretOf(kind uint8, seed []byte) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	const digits = "0123456789"
	pick := func(alpha string, n int) string {
		var b strings.Builder
		for i := range n {
			v := byte(i * 7)
			if len(seed) > 0 {
				v = seed[i%len(seed)] + byte(i*7) // no run of the alphabet (a stop word)
			}
			b.WriteByte(alpha[int(v)%len(alpha)])
		}
		return b.String()
	}
	switch kind % 8 {
	case 0:
		return "AKIA" + pick(base32, 16)
	case 1:
		return "ghp_" + pick(alnum, 36)
	case 2:
		return "xoxb-" + pick(digits, 12) + "-" + pick(digits, 13) + "-" + pick(alnum, 24)
	case 3:
		// Guarantee the character mix the rule requires.
		return "sk-Aa1" + pick(alnum, 30)
	case 4:
		return "eyJ" + pick(alnum, 20) + ".eyJ" + pick(alnum, 20) + "." + pick(alnum, 16)
	case 5:
		return "-----BEGIN EC PRIVATE KEY-----\n" + pick(alnum, 40) + "\n-----END EC PRIVATE KEY-----"
	case 6:
		return "AIza" + pick(alnum, 35)
	default:
		return "github_pat_" + pick(alnum, 82)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("before", "after", uint8(0), []byte("seed"))
	f.Add("", "", uint8(5), []byte{})
	f.Add("postgres://u:", "@h", uint8(3), []byte{0xff, 0xfe})
	f.Add("-----BEGIN PRIVATE KEY-----", "\xff\xfe", uint8(1), []byte("x"))
	f.Add("[REDACTED:", "]", uint8(4), []byte("jwt"))
	r, err := redact.New(redact.Options{Enable: []string{"email", "card-number", "password-assignment"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, prefix, suffix string, kind uint8, seed []byte) {
		// Arbitrary text never panics, and valid UTF-8 stays valid.
		out, _ := r.Redact(prefix + suffix)
		if utf8.ValidString(prefix+suffix) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input %q", prefix+suffix)
		}
		again, rep := r.Redact(out)
		if again != out || rep.Total() != 0 {
			t.Fatalf("not idempotent: %q -> %q (%v)", out, again, rep)
		}
		// A secret between separators never survives.
		secret := secretOf(kind, seed)
		in := prefix + " " + secret + " " + suffix
		out, rep = r.Redact(in)
		if strings.Contains(out, secret) {
			t.Fatalf("secret %q survived in %q", secret, out)
		}
		if rep.Total() == 0 {
			t.Fatalf("no redaction reported for %q", in)
		}
	})
}

// BenchmarkRedact measures throughput on text without secrets: prose, and
// code with the words secret rules key on (token, key, password, api).
func BenchmarkRedact(b *testing.B) {
	texts := []struct{ name, text string }{
		{"prose", strings.Repeat("The quick brown fox jumps over the lazy dog while we run go test ./... and read https://example.com/docs. ", 80)},
		{"code", strings.Repeat("func auth(ctx context.Context, token string) error { key := cfg.APIKey; if password == \"\" { return errNoKey } }\n", 80)},
	}
	r := mustNewB(b)
	for _, tc := range texts {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				r.Redact(tc.text)
			}
		})
	}
}

func mustNewB(b *testing.B) *redact.Redactor {
	r, err := redact.New(redact.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return r
}
