// Package redact removes secrets from text before cairn stores it.
//
// A Redactor holds an ordered set of rules. Each rule is a regular
// expression (RE2, so matching is linear in the input and cannot blow up on
// adversarial text) and the part of the match to hide. Every hidden span is
// replaced by a marker naming the rule, for example
// "[REDACTED:github-pat]", and the number of replacements per rule is
// returned with the result so callers can report it.
//
// Most rules are data: gitleaks' default rule set (rules/gitleaks.toml,
// MIT-licensed, embedded unchanged; see rules/README.md to update it). A
// data rule runs only on text containing one of its keywords (found for all
// rules in one pass over the text); when every match of its pattern starts
// with a keyword (most rules, once the lazy "name before the keyword" lead
// that never changes the secret is dropped), the pattern runs anchored at
// the keyword's occurrences instead of scanning the text; its patterns
// compile on first use. Its secret is the rule's secretGroup, else its first
// non-empty capture group, else the whole match; a secret less random than
// the rule's entropy, or allowlisted (the file's global and per-rule
// regexes and stop words; path and commit conditions do not apply to text)
// is kept. generic-api-key is off unless enabled: in transcripts of code it
// hides too much that is not a secret.
//
// Most rules of the data end a token only before a quote, a space or ';',
// so a token before '.', ',', ')' or '/' was kept; cairn ends it before any
// character that is not a letter, digit or '_' (the rule's own character
// classes still decide where a token with '-', '.' or '/' inside stops).
//
// cairn's own rules cover what the data does not: private-key (first, so a
// whole key block, also truncated or with escaped newlines, becomes one
// marker; it replaces the data's rule of the same name), aws-secret-key,
// aws-secret-after-key-id (an unlabelled secret right after its key id),
// gcp-service-account, openai-key (any sk- key), authorization-header
// (Basic, Bearer and other schemes), azure-storage-key (AccountKey=,
// SharedAccessKey=) and url-password, all on;
// email, card-number (Luhn-checked) and password-assignment, off unless
// enabled. Rule names of earlier versions (github-token, slack-token,
// aws-access-key, stripe-key) still select the data rules that replaced
// them. Callers may add their own rules.
//
// RedactName redacts a name (a channel id, an agent, a project) so that it
// stays a name: a secret becomes "redacted-RULE-HASH", HASH from the
// secret, so the same secret always gives the same name.
//
// Redaction is idempotent: redacting already redacted text returns it
// unchanged and counts nothing, so re-importing exported data is stable.
//
// A Redactor is safe for concurrent use. The parsed rule data is shared by
// every Redactor of the process and never changes after it is built.
// This package imports nothing from the project.
package redact
