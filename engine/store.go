package engine

import (
	"context"
	"unicode"
)

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// StoreMessage stores a message in in.Channel and returns its id. Storing
// the same content from the same sender in the same channel again returns
// the existing id with Created false and writes nothing (the sender's
// last_active is still updated); so does, with NearDuplicate, content
// whose vector is within Options.NearDuplicateCosine of an earlier
// message by the same sender in the same channel (with an embedder; a
// write that supersedes another is never a near-duplicate). Bad input returns an *InvalidError and
// writes nothing; a channel outside the auto-created namespaces that does
// not exist returns ErrNotFound.
func (e *Engine) StoreMessage(ctx context.Context, in NewMessage) (WriteResult, error) {
	in.repo = e.opts.BreadcrumbRepo
	p, err := e.prepare(in)
	if err != nil {
		return WriteResult{}, err
	}
	if dup, ok, err := e.nearDuplicate(ctx, p); err != nil || ok {
		return dup, err
	}
	res, err := e.writePrepared(ctx, []prepared{p})
	if err != nil {
		return WriteResult{}, err
	}
	return res[0], nil
}

// WriteNote stores a note from in.Agent in its notes channel
// (agent-notes:{agent}, or agent-notes:{agent}:{project} with a project).
func (e *Engine) WriteNote(ctx context.Context, in NewNote) (WriteResult, error) {
	if err := CheckAgent("agent", in.Agent); err != nil {
		return WriteResult{}, err
	}
	if err := checkProject("project", in.Project); err != nil {
		return WriteResult{}, err
	}
	typ := in.Type
	if typ == "" && metadataType(in.Metadata) == "" {
		typ = TypeReflection
	}
	return e.StoreMessage(ctx, NewMessage{
		Channel:     NotesChannelID(in.Agent, in.Project),
		Sender:      in.Agent,
		Project:     in.Project,
		Content:     in.Content,
		Metadata:    in.Metadata,
		Breadcrumbs: in.Breadcrumbs,
		Confidence:  in.Confidence,
		Type:        typ,
		CreatedAt:   in.CreatedAt,
		Supersedes:  in.Supersedes,
	})
}
