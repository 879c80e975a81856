package chromaapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// apiError is an error answer: a status and Chroma's {"error","message"}.
// An empty name means an empty body (unknown route, wrong method).
type apiError struct {
	status  int
	name    string
	message string
	allow   string // Allow header for 405
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.name, e.message) }

// Chroma's error names (the "error" field of its error bodies).
const (
	nameInvalid  = "InvalidArgumentError"
	nameNotFound = "NotFoundError"
	nameChroma   = "ChromaError"
	nameInternal = "InternalError"
)

// serdePrefix starts every 422 message: Chroma's framework (axum with
// serde) answers a body of the wrong shape with it.
const serdePrefix = "Failed to deserialize the JSON body into the target type: "

func errSyntax(detail string) *apiError {
	return &apiError{status: 400, name: nameInvalid, message: "Failed to parse the request body as JSON: " + detail}
}

func errInvalid(format string, args ...any) *apiError {
	return &apiError{status: 400, name: nameInvalid, message: fmt.Sprintf(format, args...)}
}

var errNotFoundRoute = &apiError{status: 404}

// classes maps the store's error classes to Chroma's status and error name.
var classes = []struct {
	class  error
	status int
	name   string
}{
	{chroma.ErrInvalid, 400, nameInvalid},
	{chroma.ErrDimensionMismatch, 400, nameInvalid},
	{chroma.ErrEmbedderMismatch, 400, nameInvalid},
	{where.ErrInvalid, 400, nameInvalid},
	{chroma.ErrNotFound, 404, nameNotFound},
	{chroma.ErrExists, 409, nameChroma},
	{chroma.ErrForbidden, 403, nameChroma},
	{chroma.ErrClosed, 503, nameChroma},
	{context.Canceled, 503, nameChroma},
	{context.DeadlineExceeded, 503, nameChroma},
}

// ruleStatus is the status and error name of the rules Chroma answers
// otherwise than their class: its framework refuses a body of the wrong
// shape with 422 before any validator runs (a missing or null field, an
// unknown enum value, a number out of its type's range), and an id of a
// query's ids filter that is not stored fails its query plan (500).
func ruleStatus(e *chroma.Error) (status int, name string, ok bool) {
	switch e.Rule {
	case chroma.RuleMissing, chroma.RuleNullVector, chroma.RuleNullMetadata, chroma.RuleImmutable,
		chroma.RuleInclude, chroma.RuleNResults, chroma.RuleSpace:
		return 422, nameChroma, true
	case chroma.RuleNegative:
		// limit and offset are unsigned in Chroma's request types; a
		// dimension is checked by its validator (400).
		if e.Field != "dimension" {
			return 422, nameChroma, true
		}
	case chroma.RuleUnknownID:
		return 500, nameInternal, true
	}
	return 0, "", false
}

// diskFullMessage answers a write that found no space. A fixed text: the
// cause (a file system error) names the file's absolute path, which a
// client has no business seeing.
const diskFullMessage = "Disk full: no space left on the device holding the data dir; nothing was written"

// messages words each rule of the store the way Chroma 1.0.0 does for the
// same request (or, for cairn's own rules, in Chroma's style). A rule
// missing here answers the error's own text.
var messages = map[chroma.Rule]func(e *chroma.Error) string{
	chroma.RuleName: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name containing 3-512 characters from [a-zA-Z0-9._-], starting and ending with a character in [a-zA-Z0-9]. Got: %s", e.Field, e.Value)
	},
	chroma.RuleNameDots: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name that does not contains two consecutive periods (..). Got %s", e.Field, e.Value)
	},
	chroma.RuleNameIP: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name that is not a valid ip address. Got %s", e.Field, e.Value)
	},
	chroma.RuleNameShort: func(e *chroma.Error) string {
		b, _ := json.Marshal(e.Value)
		return fmt.Sprintf(`Validation error: %s: Validation error: length [{"min": Number(3), "value": String(%s)}]`, e.Field, b)
	},
	chroma.RuleNameLong: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name of at most %d characters. Got %s characters", e.Field, chroma.MaxNameChars, e.Value)
	},
	chroma.RuleNameControl: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name without control characters. Got %q", e.Field, e.Value)
	},
	chroma.RuleIDLong: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: ids: Expected ids of at most %d bytes. Got an id of %s bytes", chroma.MaxIDBytes, e.Value)
	},
	chroma.RuleCollectionID: func(*chroma.Error) string { return "Collection ID is not a valid UUIDv4" },
	chroma.RuleNoTenant:     func(e *chroma.Error) string { return fmt.Sprintf("Tenant [%s] not found", e.Value) },
	chroma.RuleNoDatabase: func(e *chroma.Error) string {
		switch e.Op {
		case "GetDatabase":
			return fmt.Sprintf("Database [%s] not found. Are you sure it exists?", e.Value)
		case "CreateCollection":
			return fmt.Sprintf("Database [%s] does not exist", e.Value)
		}
		return fmt.Sprintf("Database [%s] not found", e.Value)
	},
	chroma.RuleNoCollection: func(e *chroma.Error) string {
		if e.Field == "id" {
			return fmt.Sprintf("Collection [%s] does not exists.", e.Value)
		}
		return fmt.Sprintf("Collection [%s] does not exists", e.Value)
	},
	chroma.RuleTaken: func(e *chroma.Error) string {
		return fmt.Sprintf("%s [%s] already exists", strings.ToUpper(e.Field[:1])+e.Field[1:], e.Value)
	},
	chroma.RuleNegative: func(e *chroma.Error) string {
		if e.Field == "dimension" {
			return "Validation error: dimension must not be negative"
		}
		return serdePrefix + "limit and offset must not be negative"
	},
	chroma.RuleOneIndex:     func(*chroma.Error) string { return "Multiple vector index configurations provided" },
	chroma.RuleHNSWMetadata: func(*chroma.Error) string { return "Failed to parse hnsw parameters from segment metadata" },
	chroma.RuleSpace: func(e *chroma.Error) string {
		return fmt.Sprintf("unknown variant `%s`, expected one of `l2`, `cosine`, `ip`", e.Value)
	},
	chroma.RuleRange: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: %s must be in [%d, %d], got %s", e.Field, e.Min, e.Max, e.Value)
	},
	chroma.RuleEmptyMetadata: func(e *chroma.Error) string {
		return fmt.Sprintf("Validation error: %s: Metadata cannot be empty", e.Field)
	},
	chroma.RuleNullMetadata: func(e *chroma.Error) string {
		if e.Key != "" {
			return fmt.Sprintf("%s%s: data did not match any variant of untagged enum MetadataValue (key %q)", serdePrefix, e.Field, e.Key)
		}
		return fmt.Sprintf("%s%s: data did not match any variant of untagged enum MetadataValue", serdePrefix, e.Field)
	},
	chroma.RuleImmutable:     func(e *chroma.Error) string { return serdePrefix + e.Field + ": unknown field" },
	chroma.RuleResetDisabled: func(*chroma.Error) string { return "Reset is disabled by config" },
	chroma.RuleLengths: func(*chroma.Error) string {
		return "Inconsistent number of IDs, embeddings, documents, URIs and metadatas"
	},
	chroma.RuleEmptyVector: func(*chroma.Error) string {
		return "Validation error: embeddings: Each embedding must have at least 1 dimension"
	},
	chroma.RuleMixedDims: func(*chroma.Error) string { return "Inconsistent dimensions in provided embeddings" },
	chroma.RuleNonFinite: func(*chroma.Error) string { return "Embeddings must not contain NaN or infinite values" },
	chroma.RuleDimension: func(e *chroma.Error) string {
		return fmt.Sprintf("Collection expecting embedding with dimension of %s, got %s", e.Want, e.Value)
	},
	chroma.RuleModel: func(e *chroma.Error) string {
		// cairn's own rule: no Chroma text; the reason with a capital, as Chroma words its messages.
		return strings.ToUpper(e.Reason[:1]) + e.Reason[1:]
	},
	chroma.RuleScanLimit: func(e *chroma.Error) string {
		// cairn's own rule: no Chroma text.
		return "Invalid where document clause: " + e.Reason
	},
	chroma.RuleMissing:    func(e *chroma.Error) string { return serdePrefix + "missing field `" + e.Field + "`" },
	chroma.RuleNullVector: func(e *chroma.Error) string { return serdePrefix + e.Field + ": null embedding" },
	chroma.RuleEmptyID:    func(*chroma.Error) string { return "Empty ID, ID must have at least one character" },
	chroma.RuleNoSelector: func(*chroma.Error) string {
		return "Validation error: ids, where: Either ids or where must be specified"
	},
	chroma.RuleInclude: func(e *chroma.Error) string {
		return serdePrefix + "include: unknown variant `" + e.Value + "`, expected one of `distances`, `documents`, `embeddings`, `metadatas`, `uris`"
	},
	chroma.RuleNResults: func(e *chroma.Error) string {
		return serdePrefix + "n_results: invalid value: integer `" + e.Value + "`, expected u32"
	},
	chroma.RuleUnknownID: func(*chroma.Error) string { return "Error executing plan: Internal error: Error finding id" },
}

// filterMessage words an invalid where or where_document clause as Chroma
// does: one message per clause, and the regex compiler's error for a bad
// pattern (Go's wording after Chroma's prefix, a declared divergence).
func filterMessage(e *where.Error) string {
	if e.Pattern != "" && e.Err != nil {
		msg := strings.TrimPrefix(e.Err.Error(), "error parsing regexp: ")
		return fmt.Sprintf("Regex syntax errror: regex parse error:\n    %s\nerror: %s", e.Pattern, msg)
	}
	if e.Clause == where.ClauseDocument {
		return "Invalid where document clause"
	}
	return "Invalid where clause"
}

// fromStore maps an error of the collection store (or of the filter
// parser) to its Chroma answer. This is the one place where the store's
// error classes and rules meet HTTP statuses and Chroma's texts.
func fromStore(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	// Checked before the classes: a full disk is reported whatever class
	// the store wrapped it in (507 Insufficient Storage, as cairn's API).
	if errors.Is(err, syscall.ENOSPC) {
		return &apiError{status: http.StatusInsufficientStorage, name: nameChroma, message: diskFullMessage}
	}
	out := &apiError{status: 500, name: nameInternal, message: err.Error()}
	for _, c := range classes {
		if errors.Is(err, c.class) {
			out.status, out.name = c.status, c.name
			break
		}
	}
	var we *where.Error
	var ve *chroma.Error
	switch {
	case errors.Is(err, chroma.ErrClosed):
		out.message = "service unavailable: store closed"
	case errors.As(err, &we):
		out.message = filterMessage(we)
	case errors.As(err, &ve):
		if status, name, ok := ruleStatus(ve); ok {
			out.status, out.name = status, name
		}
		if f := messages[ve.Rule]; f != nil {
			out.message = f(ve)
		}
	}
	return out
}
