package chromaapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn/vecstore"
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
	{vecstore.ErrInvalid, 400, nameInvalid},
	{vecstore.ErrDimensionMismatch, 400, nameInvalid},
	{vecstore.ErrEmbedderMismatch, 400, nameInvalid},
	{where.ErrInvalid, 400, nameInvalid},
	{vecstore.ErrUnprocessable, 422, nameChroma},
	{vecstore.ErrNotFound, 404, nameNotFound},
	{vecstore.ErrExists, 409, nameChroma},
	{vecstore.ErrForbidden, 403, nameChroma},
	{vecstore.ErrUnimplemented, 501, nameChroma},
	{vecstore.ErrClosed, 503, nameChroma},
	{context.Canceled, 503, nameChroma},
	{context.DeadlineExceeded, 503, nameChroma},
	{vecstore.ErrInternal, 500, nameInternal},
}

// diskFullMessage answers a write that found no space. A fixed text: the
// cause (a file system error) names the file's absolute path, which a
// client has no business seeing.
const diskFullMessage = "Disk full: no space left on the device holding the data dir; nothing was written"

// messages words each rule of the store the way Chroma 1.0.0 does for the
// same request (or, for cairn's own rules, in Chroma's style). A rule
// missing here answers the error's own text.
var messages = map[vecstore.Rule]func(e *vecstore.Error) string{
	vecstore.RuleName: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name containing 3-512 characters from [a-zA-Z0-9._-], starting and ending with a character in [a-zA-Z0-9]. Got: %s", e.Field, e.Value)
	},
	vecstore.RuleNameDots: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name that does not contains two consecutive periods (..). Got %s", e.Field, e.Value)
	},
	vecstore.RuleNameIP: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name that is not a valid ip address. Got %s", e.Field, e.Value)
	},
	vecstore.RuleNameShort: func(e *vecstore.Error) string {
		b, _ := json.Marshal(e.Value)
		return fmt.Sprintf(`Validation error: %s: Validation error: length [{"min": Number(3), "value": String(%s)}]`, e.Field, b)
	},
	vecstore.RuleNameLong: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name of at most %d characters. Got %s characters", e.Field, vecstore.MaxNameChars, e.Value)
	},
	vecstore.RuleNameControl: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: %s: Expected a name without control characters. Got %q", e.Field, e.Value)
	},
	vecstore.RuleIDLong: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: ids: Expected ids of at most %d bytes. Got an id of %s bytes", vecstore.MaxIDBytes, e.Value)
	},
	vecstore.RuleCollectionID: func(*vecstore.Error) string { return "Collection ID is not a valid UUIDv4" },
	vecstore.RuleNoTenant:     func(e *vecstore.Error) string { return fmt.Sprintf("Tenant [%s] not found", e.Value) },
	vecstore.RuleNoDatabase: func(e *vecstore.Error) string {
		switch e.Op {
		case "GetDatabase":
			return fmt.Sprintf("Database [%s] not found. Are you sure it exists?", e.Value)
		case "CreateCollection":
			return fmt.Sprintf("Database [%s] does not exist", e.Value)
		}
		return fmt.Sprintf("Database [%s] not found", e.Value)
	},
	vecstore.RuleNoCollection: func(e *vecstore.Error) string {
		if e.Field == "id" {
			return fmt.Sprintf("Collection [%s] does not exists.", e.Value)
		}
		return fmt.Sprintf("Collection [%s] does not exists", e.Value)
	},
	vecstore.RuleTaken: func(e *vecstore.Error) string {
		return fmt.Sprintf("%s [%s] already exists", strings.ToUpper(e.Field[:1])+e.Field[1:], e.Value)
	},
	vecstore.RuleNegative: func(e *vecstore.Error) string {
		if e.Field == "dimension" {
			return "Validation error: dimension must not be negative"
		}
		return serdePrefix + "limit and offset must not be negative"
	},
	vecstore.RuleOneIndex:     func(*vecstore.Error) string { return "Multiple vector index configurations provided" },
	vecstore.RuleHNSWMetadata: func(*vecstore.Error) string { return "Failed to parse hnsw parameters from segment metadata" },
	vecstore.RuleSpace: func(e *vecstore.Error) string {
		return fmt.Sprintf("unknown variant `%s`, expected one of `l2`, `cosine`, `ip`", e.Value)
	},
	vecstore.RuleRange: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: %s must be in [%d, %d], got %s", e.Field, e.Min, e.Max, e.Value)
	},
	vecstore.RuleEmptyMetadata: func(e *vecstore.Error) string {
		return fmt.Sprintf("Validation error: %s: Metadata cannot be empty", e.Field)
	},
	vecstore.RuleNullMetadata: func(e *vecstore.Error) string {
		if e.Key != "" {
			return fmt.Sprintf("%s%s: data did not match any variant of untagged enum MetadataValue (key %q)", serdePrefix, e.Field, e.Key)
		}
		return fmt.Sprintf("%s%s: data did not match any variant of untagged enum MetadataValue", serdePrefix, e.Field)
	},
	vecstore.RuleImmutable:     func(e *vecstore.Error) string { return serdePrefix + e.Field + ": unknown field" },
	vecstore.RuleResetDisabled: func(*vecstore.Error) string { return "Reset is disabled by config" },
	vecstore.RuleLengths: func(*vecstore.Error) string {
		return "Inconsistent number of IDs, embeddings, documents, URIs and metadatas"
	},
	vecstore.RuleEmptyVector: func(*vecstore.Error) string {
		return "Validation error: embeddings: Each embedding must have at least 1 dimension"
	},
	vecstore.RuleMixedDims: func(*vecstore.Error) string { return "Inconsistent dimensions in provided embeddings" },
	vecstore.RuleNonFinite: func(*vecstore.Error) string { return "Embeddings must not contain NaN or infinite values" },
	vecstore.RuleDimension: func(e *vecstore.Error) string {
		return fmt.Sprintf("Collection expecting embedding with dimension of %s, got %s", e.Want, e.Value)
	},
	vecstore.RuleModel: func(e *vecstore.Error) string {
		// cairn's own rule: no Chroma text; the reason with a capital, as Chroma words its messages.
		return strings.ToUpper(e.Reason[:1]) + e.Reason[1:]
	},
	vecstore.RuleScanLimit: func(e *vecstore.Error) string {
		// cairn's own rule: no Chroma text.
		return "Invalid where document clause: " + e.Reason
	},
	vecstore.RuleMissing:    func(e *vecstore.Error) string { return serdePrefix + "missing field `" + e.Field + "`" },
	vecstore.RuleNullVector: func(e *vecstore.Error) string { return serdePrefix + e.Field + ": null embedding" },
	vecstore.RuleEmptyID:    func(*vecstore.Error) string { return "Empty ID, ID must have at least one character" },
	vecstore.RuleNoSelector: func(*vecstore.Error) string {
		return "Validation error: ids, where: Either ids or where must be specified"
	},
	vecstore.RuleInclude: func(e *vecstore.Error) string {
		return serdePrefix + "include: unknown variant `" + e.Value + "`, expected one of `distances`, `documents`, `embeddings`, `metadatas`, `uris`"
	},
	vecstore.RuleNResults: func(e *vecstore.Error) string {
		return serdePrefix + "n_results: invalid value: integer `" + e.Value + "`, expected u32"
	},
	vecstore.RuleUnknownID: func(*vecstore.Error) string { return "Error executing plan: Internal error: Error finding id" },
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
	var ve *vecstore.Error
	switch {
	case errors.Is(err, vecstore.ErrClosed):
		out.message = "service unavailable: store closed"
	case errors.As(err, &we):
		out.message = filterMessage(we)
	case errors.As(err, &ve):
		if f := messages[ve.Rule]; f != nil {
			out.message = f(ve)
		}
	}
	return out
}
