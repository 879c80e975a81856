package chroma

import (
	"errors"
	"fmt"
	"strconv"
)

// Error classes: what kind of refusal an error is, in the model's terms.
// Every error a Store returns for a refused request or damaged data
// matches exactly one of them with errors.Is, so that each surface (the
// Chroma HTTP adapter, MCP, the CLI) maps a class once; where a surface
// must tell two refusals of one class apart (Chroma answers some invalid
// requests 422 and others 400), it looks at the Rule.
var (
	// ErrInvalid: the request breaks a rule of the model: a name, an id,
	// a value, a filter, a missing or null field, an unknown include name,
	// a configuration field that cannot change.
	ErrInvalid = errors.New("vecstore: invalid argument")
	// ErrNotFound: a tenant, database or collection does not exist, or a
	// record a query's ids filter names is not stored (RuleUnknownID).
	ErrNotFound = errors.New("vecstore: not found")
	// ErrExists: a tenant, database or collection already exists.
	ErrExists = errors.New("vecstore: already exists")
	// ErrForbidden: an operation the store's configuration disables (reset).
	ErrForbidden = errors.New("vecstore: forbidden")
	// ErrDimensionMismatch: a vector's length differs from the collection's dimension.
	ErrDimensionMismatch = errors.New("vecstore: dimension mismatch")
	// ErrEmbedderMismatch: vectors of one embedding model written to or queried against
	// a collection that holds another model's vectors.
	ErrEmbedderMismatch = errors.New("vecstore: embedding model mismatch")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("vecstore: closed")
	// ErrCorrupt: stored bytes failed a magic, checksum or structure check.
	// vecstore's Store.Repair rebuilds what can be rebuilt.
	ErrCorrupt = errors.New("vecstore: corrupt data")
	// ErrIncompatibleFormat: the data was written by a newer (or unknown) format version.
	ErrIncompatibleFormat = errors.New("vecstore: incompatible format")
)

// Rule names the rule a refused request broke. Surfaces word each rule
// once (the Chroma adapter in Chroma's words); Error.Reason says it in
// cairn's. The fields of Error a rule fills are listed with it.
type Rule string

const (
	RuleName          Rule = "name"           // Field, Value: 3-512 characters of [a-zA-Z0-9._-], alphanumeric at both ends
	RuleNameDots      Rule = "name_dots"      // Field, Value: no ".."
	RuleNameIP        Rule = "name_ip"        // Field, Value: not an IP address
	RuleNameShort     Rule = "name_short"     // Field, Value: at least 3 characters (tenants, databases)
	RuleNameLong      Rule = "name_long"      // Field, Value (the length): at most MaxNameChars (tenants, databases)
	RuleNameControl   Rule = "name_control"   // Field, Value: no control characters (tenants, databases)
	RuleIDLong        Rule = "id_long"        // Field, Value (the length): at most MaxIDBytes
	RuleCollectionID  Rule = "collection_id"  // Value: a UUID
	RuleNoTenant      Rule = "no_tenant"      // Value
	RuleNoDatabase    Rule = "no_database"    // Op, Value
	RuleNoCollection  Rule = "no_collection"  // Field ("id" or "name"), Value
	RuleTaken         Rule = "taken"          // Field ("tenant", "database" or "collection"), Value
	RuleNegative      Rule = "negative"       // Field
	RuleOneIndex      Rule = "one_index"      // both hnsw and spann configured
	RuleHNSWMetadata  Rule = "hnsw_metadata"  // Field: a legacy "hnsw:*" metadata key with a bad value
	RuleSpace         Rule = "space"          // Field, Value: l2, cosine or ip
	RuleRange         Rule = "range"          // Field, Min, Max, Value
	RuleEmptyMetadata Rule = "empty_metadata" // Field
	RuleNullMetadata  Rule = "null_metadata"  // Field, Key: a null value where it cannot delete a key
	RuleImmutable     Rule = "immutable"      // Field: a configuration field that cannot change
	RuleResetDisabled Rule = "reset_disabled" // Options.AllowReset is false
	RuleLengths       Rule = "lengths"        // ids, embeddings, documents, uris and metadatas differ in length
	RuleEmptyVector   Rule = "empty_vector"   // Field
	RuleMixedDims     Rule = "mixed_dims"     // Field
	RuleNonFinite     Rule = "non_finite"     // Field
	RuleDimension     Rule = "dimension"      // Want, Value: the collection's dimension and the vector's
	RuleModel         Rule = "model"          // Want, Value: the collection's model and the request's ("" = none)
	RuleMissing       Rule = "missing"        // Field
	RuleNullVector    Rule = "null_vector"    // Field
	RuleEmptyID       Rule = "empty_id"       // Field
	RuleNoSelector    Rule = "no_selector"    // update/delete without ids or where
	RuleInclude       Rule = "include"        // Value
	RuleNResults      Rule = "n_results"      // Value
	RuleUnknownID     Rule = "unknown_id"     // Value: an id of a query's ids filter that is not stored
	RuleFilter        Rule = "filter"         // Field ("where" or "where_document"); Err is the *where.Error
	RuleScanLimit     Rule = "scan_limit"     // Field, Value: the bytes a document filter may scan
	RuleFormat        Rule = "format"         // Value: the file's format version
	RuleCorrupt       Rule = "corrupt"        // Reason, Err
	RuleVectorCode    Rule = "vector_code"    // Field, Key, Value: a MetaVectorCode value other than "float32", "sq8" or "sq8r"
)

// Error is the concrete error type a Store returns for a refused request
// or damaged data. Class is one of the Err* sentinels above
// (errors.Is(err, ErrInvalid) ...); Rule, Field and the values say what was
// refused, for surfaces to word; Reason says it in cairn's words. Err, if
// not nil, is the underlying cause.
type Error struct {
	Class error
	Rule  Rule
	// Op is the Store method that refused, when the rule's wording depends
	// on it (RuleNoDatabase).
	Op string
	// Field is the request field at fault ("name", "embeddings",
	// "metadatas", "hnsw.ef_search", ...), "" when none.
	Field string
	// Key is the metadata key at fault, when one is.
	Key string
	// Value is the offending value (a name, id, include name, a vector's
	// dimension, a model id) and Want what the rule expected, as text.
	Value, Want string
	// Min and Max bound RuleRange.
	Min, Max int
	// Reason is the rule in cairn's words.
	Reason string
	Err    error
}

func (e *Error) Error() string {
	s := "vecstore: "
	if e.Field != "" {
		s += e.Field + ": "
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is e's class.
func (e *Error) Is(target error) bool { return target == e.Class }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func refuse(class error, rule Rule, field, format string, args ...any) *Error {
	return &Error{Class: class, Rule: rule, Field: field, Reason: fmt.Sprintf(format, args...)}
}

func invalidErr(rule Rule, field, format string, args ...any) *Error {
	return refuse(ErrInvalid, rule, field, format, args...)
}

// withValue sets Value (and returns e for chaining).
func (e *Error) withValue(v string) *Error { e.Value = v; return e }

// filterErr wraps a where-language error of a request's field.
func filterErr(field string, err error) *Error {
	return &Error{Class: ErrInvalid, Rule: RuleFilter, Field: field, Reason: "invalid filter", Err: err}
}

func itoa(n int) string { return strconv.Itoa(n) }

func rangeErr(field string, lo, hi, got int) *Error {
	e := invalidErr(RuleRange, field, "must be in [%d, %d], got %d", lo, hi, got)
	e.Min, e.Max, e.Value = lo, hi, itoa(got)
	return e
}
