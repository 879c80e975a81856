// Package redact removes secrets from text before cairn stores it.
//
// A Redactor holds an ordered set of rules. Each rule is a regular
// expression (RE2, so matching is linear in the input and cannot blow up on
// adversarial text), an optional capture group naming the part to hide, and an
// optional validator (the Luhn check for card numbers, a character-mix check
// for sk- keys). Every matched span is replaced by a marker naming the rule,
// for example "[REDACTED:github-token]", and the number of replacements per
// rule is returned with the result so callers can report it.
//
// The default rules are on unless disabled by name: private key blocks, AWS
// access key ids and secret keys, GCP API keys and service-account key ids,
// GitHub tokens, Slack tokens and webhooks, OpenAI/Anthropic-style "sk-" keys,
// Stripe live keys, JWTs and passwords embedded in URLs. Optional rules
// (emails, card numbers, password assignments) are off unless enabled by name.
// Callers may add their own rules.
//
// Redaction is idempotent: redacting already redacted text returns it
// unchanged and counts nothing, so re-importing exported data is stable.
//
// A Redactor is immutable after New and safe for concurrent use.
// This package imports nothing from the project.
package redact
