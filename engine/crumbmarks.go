package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// BreadcrumbHead names the commit that is HEAD of the repository the
// breadcrumbs are checked against. The engine reads git through it only:
// the checks themselves run outside the engine and are handed in with
// PutBreadcrumbMarks. Head is called on every search and message read
// that may attach marks, so it must be cheap (a file read, not a walk of
// the history); "" means no repository, and no marks are attached.
type BreadcrumbHead interface {
	Head() (string, error)
}

// MarkState is what a check found of one breadcrumb.
type MarkState string

// Mark states.
const (
	MarkValid   MarkState = "valid"   // still true at HEAD
	MarkMoved   MarkState = "moved"   // the file was renamed (MovedTo); its range is unchanged
	MarkChanged MarkState = "changed" // the line range's text changed, or is past the end of the file
	MarkGone    MarkState = "gone"    // the file or commit is not at HEAD / not reachable
	MarkForm    MarkState = "form"    // not checkable offline; its form was checked on write
)

// BreadcrumbMark is one breadcrumb's check.
type BreadcrumbMark struct {
	Kind    string    `json:"kind"`
	Ref     string    `json:"ref"`
	State   MarkState `json:"state"`
	MovedTo string    `json:"moved_to,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

// Breadcrumb check statuses (BreadcrumbCheck.Status).
const (
	// CheckCurrent: Marks were computed at the repository's HEAD.
	CheckCurrent = "current"
	// CheckStale: the cache holds marks of another commit (CheckedAt) and
	// none of HEAD yet; a refresh (cairn check --breadcrumbs, or cairn
	// serve / cairn mcp in the background) is due. No marks are given:
	// those of another commit may be wrong now.
	CheckStale = "stale"
)

// BreadcrumbCheck is what the marks cache says of a message's breadcrumbs
// at the repository's current HEAD. Reads attach it to messages with
// breadcrumbs that were ever checked; a message never checked has none.
type BreadcrumbCheck struct {
	Status    string           `json:"status"`
	Head      string           `json:"head"`
	CheckedAt string           `json:"checked_at,omitempty"`
	Marks     []BreadcrumbMark `json:"marks,omitempty"`
}

// worstOf ranks marks for the cache's worst column: 0 every breadcrumb
// valid (or form only), 1 some moved, 2 some changed or gone.
func worstOf(marks []BreadcrumbMark) int {
	w := 0
	for _, m := range marks {
		switch m.State {
		case MarkMoved:
			w = max(w, 1)
		case MarkChanged, MarkGone:
			w = 2
		}
	}
	return w
}

// staleWorst is the worst value a note's score is demoted at
// (Ranking.StaleFactor): changed or gone. A moved file still says what the
// note said, under another name.
const staleWorst = 2

var headRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

func checkHead(head string) error {
	if !headRE.MatchString(head) {
		return invalid("head", "must be a full commit hash (40 or 64 lower-case hex digits), got %q", head)
	}
	return nil
}

// breadcrumbHead returns the repository's HEAD, "" without a repository or
// when it cannot be read (marks are then left out: a read never fails for
// want of git).
func (e *Engine) breadcrumbHead() string {
	if e.opts.BreadcrumbHead == nil {
		return ""
	}
	h, err := e.opts.BreadcrumbHead.Head()
	if err != nil {
		e.opts.Logger.Debug("breadcrumb repository HEAD unreadable", "err", err)
		return ""
	}
	if checkHead(h) != nil {
		return ""
	}
	return h
}

// PutBreadcrumbMarks stores the marks of messages checked at head, each
// replacing what the cache held of that message. Ids of messages deleted
// since are skipped. One write transaction.
func (e *Engine) PutBreadcrumbMarks(ctx context.Context, head string, marks map[int64][]BreadcrumbMark) error {
	if err := checkHead(head); err != nil {
		return err
	}
	for id, ms := range marks {
		for _, m := range ms {
			switch m.State {
			case MarkValid, MarkMoved, MarkChanged, MarkGone, MarkForm:
			default:
				return invalid("state", "message %d: must be valid, moved, changed, gone or form, got %q", id, m.State)
			}
		}
	}
	if e.bs != nil {
		return e.backendPutMarks(ctx, head, marks)
	}
	done, err := e.enter()
	if err != nil {
		return err
	}
	defer done()
	tx, err := e.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO breadcrumb_marks (message_id, head, worst, marks)
		SELECT id, ?, ?, ? FROM messages WHERE id = ?
		ON CONFLICT (message_id) DO UPDATE SET head = excluded.head, worst = excluded.worst, marks = excluded.marks`)
	if err != nil {
		return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
	}
	defer st.Close()
	for id, ms := range marks {
		if ms == nil {
			ms = []BreadcrumbMark{}
		}
		b, err := json.Marshal(ms)
		if err != nil {
			return fmt.Errorf("engine: put breadcrumb marks: %w", err)
		}
		if _, err := st.ExecContext(ctx, head, worstOf(ms), string(b), id); err != nil {
			return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
	}
	return nil
}

// MessagesToMark returns up to limit messages with breadcrumbs, an id above
// afterID and no marks at head, in id order: a page of the walk that
// refreshes the cache after HEAD moved or new notes came in.
func (e *Engine) MessagesToMark(ctx context.Context, head string, afterID int64, limit int) ([]Message, error) {
	if err := checkHead(head); err != nil {
		return nil, err
	}
	limit, err := checkLimit(limit, DefaultLimit)
	if err != nil {
		return nil, err
	}
	if e.bs != nil {
		return e.backendMessagesToMark(ctx, head, afterID, limit)
	}
	done, err := e.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	ms, err := queryMessages(ctx, e.r, "SELECT "+messageColumns+` FROM messages m
		WHERE m.id > ? AND m.has_breadcrumbs = 1
		AND NOT EXISTS (SELECT 1 FROM breadcrumb_marks b WHERE b.message_id = m.id AND b.head = ?)
		ORDER BY m.id LIMIT ?`, afterID, head, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: messages to mark: %w", err)
	}
	return ms, nil
}

// attachChecks sets the BreadcrumbCheck of the messages with breadcrumbs
// that the cache holds, at the repository's HEAD: one indexed lookup of
// at most len(ms) rows, and no git beyond reading HEAD.
func (e *Engine) attachChecks(ctx context.Context, ms []*Message) error {
	var ids []int64
	for _, m := range ms {
		if m.HasBreadcrumbs {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	head := e.breadcrumbHead()
	if head == "" {
		return nil
	}
	rows, err := e.markRows(ctx, ids)
	if err != nil {
		return err
	}
	checks := map[int64]*BreadcrumbCheck{}
	for id, r := range rows {
		c := &BreadcrumbCheck{Status: CheckStale, Head: head, CheckedAt: r.Head}
		if r.Head == head {
			c.Status, c.CheckedAt = CheckCurrent, ""
			if err := json.Unmarshal([]byte(r.Marks), &c.Marks); err != nil {
				return fmt.Errorf("%w: breadcrumb marks of message %d: %v", ErrCorrupt, id, err)
			}
		}
		checks[id] = c
	}
	for _, m := range ms {
		m.BreadcrumbCheck = checks[m.ID]
	}
	return nil
}

// markRows returns the cached marks of those of ids that have them: from
// the store's MarkStore when it has one, else from the data dir's table
// (none on another Backend).
func (e *Engine) markRows(ctx context.Context, ids []int64) (map[int64]MarkRow, error) {
	if ms, ok := e.store.(MarkStore); ok {
		return ms.Marks(ctx, ids)
	}
	if e.bs != nil {
		return map[int64]MarkRow{}, nil
	}
	rows, err := e.r.QueryContext(ctx, "SELECT message_id, head, worst, marks FROM breadcrumb_marks WHERE message_id IN ("+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
	}
	defer rows.Close()
	out := map[int64]MarkRow{}
	for rows.Next() {
		var id int64
		var r MarkRow
		if err := rows.Scan(&id, &r.Head, &r.Worst, &r.Marks); err != nil {
			return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
		}
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
	}
	return out, nil
}

// attachResultChecks is attachChecks for search results, on a store that
// keeps the checks (BreadcrumbChecks).
func (e *Engine) attachResultChecks(ctx context.Context, rs []SearchResult) error {
	if e.caps.checks == nil {
		return nil
	}
	ms := make([]*Message, len(rs))
	for i := range rs {
		ms[i] = &rs[i].Message
	}
	return e.caps.checks.AttachChecks(ctx, ms)
}

// staleAmong returns the ids among ids whose marks at head say a
// breadcrumb changed or is gone.
func (e *Engine) staleAmong(ctx context.Context, head string, ids []int64) (map[int64]bool, error) {
	if e.bs != nil {
		rows, err := e.markRows(ctx, ids)
		out := map[int64]bool{}
		for id, r := range rows {
			if r.Head == head && r.Worst >= staleWorst {
				out[id] = true
			}
		}
		return out, err
	}
	return e.marksAmong(ctx, "head = ? AND worst >= ?", []any{head, staleWorst}, ids)
}

// validAmong returns the ids among ids whose marks at head say every
// breadcrumb is valid.
func (e *Engine) validAmong(ctx context.Context, head string, ids []int64) (map[int64]bool, error) {
	return e.marksAmong(ctx, "head = ? AND worst = 0", []any{head}, ids)
}

func (e *Engine) marksAmong(ctx context.Context, cond string, args []any, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := e.r.QueryContext(ctx, "SELECT message_id FROM breadcrumb_marks WHERE "+cond+" AND message_id IN ("+placeholders(len(ids))+")",
		append(args, int64Args(ids)...)...)
	if err != nil {
		return nil, fmt.Errorf("engine: search: %w", classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("engine: search: %w", classify(err))
		}
		out[id] = true
	}
	return out, classify(rows.Err())
}

// validSQL is the filter condition "every breadcrumb valid at head" over
// the messages table aliased as alias.
func validSQL(alias, head string) (string, []any) {
	return "EXISTS (SELECT 1 FROM breadcrumb_marks b WHERE b.message_id = " + alias + ".id AND b.head = ? AND b.worst = 0)", []any{head}
}

// noRepoForValid is the error of a breadcrumbs_valid search without a
// repository to check against.
func noRepoForValid() error {
	return invalid("breadcrumbs_valid", "needs the git repository the breadcrumbs are checked against: %s", strings.Join([]string{
		"set breadcrumbs.repo in config.toml (or CAIRN_BREADCRUMBS_REPO)", "or run inside the repository"}, ", "))
}
