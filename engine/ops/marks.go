package ops

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

// PutBreadcrumbMarks stores the marks of messages checked in the repository
// whose top directory is repo, at its HEAD head, each replacing what the
// cache held of that message. repo "" records that the messages (ones
// that recorded no repository) were tried at head and none of their
// breadcrumbs is in that repository: they get no mark and are not tried
// at that commit again. Ids of messages deleted since are skipped. One
// write transaction.
func PutBreadcrumbMarks(ctx context.Context, eng *engine.Engine, repo, head string, marks map[int64][]engine.BreadcrumbMark) error {
	rows, err := engine.MarkRows(repo, head, marks)
	if err != nil {
		return err
	}
	return eng.Use(func(s engine.Store) error { return s.PutMarks(ctx, rows) })
}

// MessagesToMark returns up to limit messages with breadcrumbs and an id
// above afterID that belong to the repository whose top directory is repo
// and have no marks at its HEAD head, in id order: a page of the walk that
// refreshes the cache after that HEAD moved or new notes came in. A
// message belongs to the repository it recorded (engine.RepoKey), else to
// the one a check adopted it into; one that recorded none and was never
// adopted is offered to every repository once per HEAD (the check adopts
// it when its breadcrumbs are found there).
func MessagesToMark(ctx context.Context, eng *engine.Engine, repo, head string, afterID int64, limit int) ([]engine.Message, error) {
	limit, err := engine.CheckMarkPage(repo, head, limit)
	if err != nil {
		return nil, err
	}
	var out []engine.Message
	err = eng.Use(func(s engine.Store) error {
		out, err = s.MessagesToMark(ctx, repo, head, afterID, limit)
		return err
	})
	if out == nil {
		out = []engine.Message{}
	}
	return out, err
}

// MessagesWithBreadcrumbs returns up to limit messages that have
// breadcrumbs and an id above afterID, in id order: a page of a walk over
// every such message (cairn check --breadcrumbs). limit 0 means
// engine.DefaultLimit.
func MessagesWithBreadcrumbs(ctx context.Context, eng *engine.Engine, afterID int64, limit int) ([]engine.Message, error) {
	if limit < 0 || limit > engine.MaxLimit {
		return nil, invalid("limit", "must be from 1 to %d (0 means the default), got %d", engine.MaxLimit, limit)
	}
	if limit == 0 {
		limit = engine.DefaultLimit
	}
	var out []engine.Message
	err := eng.Use(func(s engine.Store) error {
		var err error
		out, err = s.BreadcrumbMessages(ctx, afterID, limit)
		return err
	})
	return out, err
}

// CachedMarks returns the marks cache's rows of those of ids that have
// one: which repository each was checked in (Repo "" for a message
// tried and not adopted), at which HEAD, and the marks.
func CachedMarks(ctx context.Context, eng *engine.Engine, ids []int64) (map[int64]engine.MarkRow, error) {
	out := map[int64]engine.MarkRow{}
	err := eng.Use(func(s engine.Store) error {
		if len(ids) == 0 {
			return nil
		}
		var err error
		out, err = s.Marks(ctx, ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
