package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// LoCoMo categories of the dev protocol (category 5, adversarial, has no
// evidence and is skipped).
var locomoCategories = []string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

// LoCoMoCategories lists the scored categories in report order.
func LoCoMoCategories() []string {
	return []string{"multi-hop", "temporal", "open-domain", "single-hop"}
}

// Conversation is one LoCoMo conversation: its turns in order and its
// scored questions.
type Conversation struct {
	ID        string // file name without .json
	Speakers  [2]string
	Turns     []Turn
	Questions []Question
}

// Turn is one dialogue turn.
type Turn struct {
	DiaID   string // "D3:14"
	Session int
	Speaker string
	Text    string
	Caption string // blip_caption of a shared photo, if any
	At      time.Time
}

// Question is one scored question with the dia_ids of its evidence turns.
type Question struct {
	Text     string
	Category string
	Evidence []string
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// LoadLoCoMo reads the conversations of dir (26.json, 30.json, ...).
func LoadLoCoMo(dir string) ([]Conversation, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Conversation
	for _, f := range files {
		c, err := loadConversation(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no conversations in %s", dir)
	}
	return out, nil
}

func loadConversation(path string) (Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Conversation{}, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Conversation{}, err
	}
	c := Conversation{ID: strings.TrimSuffix(filepath.Base(path), ".json")}
	json.Unmarshal(raw["speaker_a"], &c.Speakers[0])
	json.Unmarshal(raw["speaker_b"], &c.Speakers[1])
	var sessions []int
	for k := range raw {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	sort.Ints(sessions)
	for _, n := range sessions {
		var when string
		if err := json.Unmarshal(raw[fmt.Sprintf("session_%d_date_time", n)], &when); err != nil {
			return c, fmt.Errorf("session_%d_date_time: %w", n, err)
		}
		at, err := time.Parse("3:04 pm on 2 January, 2006", when)
		if err != nil {
			return c, fmt.Errorf("session_%d_date_time: %w", n, err)
		}
		var turns []struct {
			Speaker, Text string
			DiaID         string `json:"dia_id"`
			Caption       string `json:"blip_caption"`
		}
		if err := json.Unmarshal(raw[fmt.Sprintf("session_%d", n)], &turns); err != nil {
			return c, fmt.Errorf("session_%d: %w", n, err)
		}
		for i, t := range turns {
			// Turns keep their order inside a session one second apart.
			c.Turns = append(c.Turns, Turn{DiaID: t.DiaID, Session: n, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption, At: at.Add(time.Duration(i) * time.Second)})
		}
	}
	var qa []struct {
		Question string
		Evidence []string
		Category int
	}
	if err := json.Unmarshal(raw["qa"], &qa); err != nil {
		return c, fmt.Errorf("qa: %w", err)
	}
	for _, q := range qa {
		if q.Category < 1 || q.Category > 4 {
			continue
		}
		var ev []string
		for _, e := range q.Evidence {
			// One upstream entry holds two ids ("D8:6; D9:17").
			for _, p := range strings.Split(e, ";") {
				if p = strings.TrimSpace(p); p != "" {
					ev = append(ev, p)
				}
			}
		}
		if len(ev) == 0 {
			continue // nothing to find: not scored
		}
		c.Questions = append(c.Questions, Question{Text: q.Question, Category: locomoCategories[q.Category], Evidence: ev})
	}
	return c, nil
}

// TurnContent is how a turn becomes a message's content: its text, and a
// shared photo's caption appended as the protocol allows.
func TurnContent(t Turn, captions bool) string {
	if captions && t.Caption != "" {
		return t.Text + " [shared a photo: " + t.Caption + "]"
	}
	return t.Text
}

// LoCoMoCorpus is the conversations stored in an engine, one channel per
// conversation, one message per turn.
type LoCoMoCorpus struct {
	Convs  []Conversation
	Engine *engine.Engine
	diaOf  map[int64]string // message id -> dia_id
	// Load is how long storing and embedding took.
	Load time.Duration
	// dir and opts are where and how the engine was opened (Reopen).
	dir  string
	opts engine.Options
}

// LoCoMoOptions say how the conversations are stored.
type LoCoMoOptions struct {
	// Captions appends shared photos' captions to the turn text.
	Captions bool
	// AnonymousSenders stores the turns under "speaker-a"/"speaker-b"
	// instead of the speakers' names, so that nothing in the engine knows
	// who is named in a question: plain BM25 for the keyword peer.
	AnonymousSenders bool
	// Projects stores each conversation's turns with the project
	// LoCoMoChannel names, as hooks and imports write a repository's
	// messages, so that a project-scoped search (recall) finds them.
	Projects bool
	// Engine is the engine's options (Embedder, ...); Now defaults to one
	// day after the last session.
	Engine engine.Options
}

// LoadLoCoMoCorpus stores every turn as a message (channel "locomo-<id>",
// sender = speaker, created_at = session time, dia_id in metadata) in a
// fresh engine in dir, through the same StoreMessages call `cairn import
// messages` makes, and waits for every vector.
func LoadLoCoMoCorpus(ctx context.Context, dir string, convs []Conversation, opts LoCoMoOptions) (*LoCoMoCorpus, error) {
	eo := opts.Engine
	if eo.Now == nil {
		at := LoCoMoNow(convs)
		eo.Now = func() time.Time { return at }
	}
	e, err := sqlite.OpenEngine(ctx, dir, eo, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	lc := &LoCoMoCorpus{Convs: convs, Engine: e, diaOf: map[int64]string{}, dir: dir, opts: eo}
	start := time.Now()
	for _, c := range convs {
		ch := LoCoMoChannel(c)
		if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: ch}); err != nil {
			e.Close()
			return nil, err
		}
		in := make([]engine.NewMessage, len(c.Turns))
		for i, t := range c.Turns {
			md, _ := json.Marshal(map[string]any{"dia_id": t.DiaID, "session": t.Session})
			sender := t.Speaker
			if opts.AnonymousSenders {
				sender = "speaker-b"
				if t.Speaker == c.Speakers[0] {
					sender = "speaker-a"
				}
			}
			in[i] = engine.NewMessage{Channel: ch, Sender: sender, Content: TurnContent(t, opts.Captions), Metadata: md, CreatedAt: t.At}
			if opts.Projects {
				in[i].Project = ch
			}
		}
		res, err := e.StoreMessages(ctx, in)
		if err != nil {
			e.Close()
			return nil, err
		}
		for i, r := range res {
			lc.diaOf[r.ID] = c.Turns[i].DiaID
		}
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		e.Close()
		return nil, err
	}
	lc.Load = time.Since(start)
	return lc, nil
}

// LoCoMoNow is the time the conversations are searched at by default:
// one day after the last session.
func LoCoMoNow(convs []Conversation) time.Time {
	var last time.Time
	for _, c := range convs {
		for _, t := range c.Turns {
			if t.At.After(last) {
				last = t.At
			}
		}
	}
	return last.Add(24 * time.Hour)
}

// LoCoMoChannel is the channel of a conversation.
func LoCoMoChannel(c Conversation) string { return "locomo-" + c.ID }

// Close closes the engine.
func (lc *LoCoMoCorpus) Close() error { return lc.Engine.Close() }

// Reopen closes the engine and opens the same store again with query
// analysis qa, so that a search option is measured on the turns already
// stored and embedded.
func (lc *LoCoMoCorpus) Reopen(ctx context.Context, qa engine.QueryAnalysis) error {
	e, err := reopen(ctx, lc.Engine, lc.dir, lc.opts, qa)
	if err != nil {
		return err
	}
	lc.Engine = e
	return nil
}

// TurnRecall10 is the protocol's turn-level recall@10 of ranked dia ids
// against a question's evidence.
func TurnRecall10(ranked, evidence []string) float64 {
	var m TurnMetrics
	m.add(ranked, evidence)
	return m.Recall10
}

// TurnMetrics are the protocol's turn-level figures over a group of
// questions, and the units peers publish LoCoMo retrieval in.
type TurnMetrics struct {
	// Recall5 and Recall10 are FractionalRecall at 5 and 10: Recall5 is
	// the unit mcp-memory-service publishes ("fractional turn-level
	// recall@5").
	Recall5, Recall10, Hit10 float64
	// SessionRecall10 is SessionRecall at 10, the unit MemPalace
	// publishes ("session-level recall@10").
	SessionRecall10 float64
	Questions       int
}

func (m *TurnMetrics) add(ranked []string, evidence []string) {
	m.Recall5 += FractionalRecall(ranked, evidence, 5)
	r10 := FractionalRecall(ranked, evidence, 10)
	m.Recall10 += r10
	if r10 > 0 {
		m.Hit10++
	}
	m.SessionRecall10 += SessionRecall(ranked, evidence, 10)
	m.Questions++
}

func (m *TurnMetrics) mean() {
	if m.Questions > 0 {
		n := float64(m.Questions)
		m.Recall5, m.Recall10, m.Hit10, m.SessionRecall10 = m.Recall5/n, m.Recall10/n, m.Hit10/n, m.SessionRecall10/n
	}
}

// FractionalRecall is the share of a question's distinct evidence turns
// found among the first k of ranked (dia_ids in rank order): the
// protocol's recall@k, and mcp-memory-service's "fractional turn-level
// recall@k". A question without evidence scores 0 (the protocol skips
// such questions).
func FractionalRecall(ranked, evidence []string, k int) float64 {
	ev := map[string]bool{}
	for _, e := range evidence {
		ev[e] = true
	}
	if len(ev) == 0 {
		return 0
	}
	found := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if ev[id] {
			found++
			ev[id] = false // a turn ranked twice counts once
		}
	}
	return float64(found) / float64(len(ev))
}

// SessionRecall is MemPalace's "session-level recall@k" on a turn-level
// ranking: the sessions of ranked (dia_ids in rank order) are ordered by
// their best-ranked turn, and the score is the share of the sessions
// holding the question's evidence found among the first k sessions.
// MemPalace stores one document per session and retrieves k of them;
// ranking a session by its best turn is the same retrieval over turns.
func SessionRecall(ranked, evidence []string, k int) float64 {
	want := map[int]bool{}
	for _, e := range evidence {
		if s := SessionOf(e); s > 0 {
			want[s] = true
		}
	}
	if len(want) == 0 {
		return 0
	}
	seen := map[int]bool{}
	found := 0
	for _, id := range ranked {
		s := SessionOf(id)
		if s == 0 || seen[s] {
			continue
		}
		if len(seen) == k {
			break
		}
		seen[s] = true
		if want[s] {
			found++
		}
	}
	return float64(found) / float64(len(want))
}

// SessionOf is the session number of a dia_id (3 for "D3:14"),
// 0 when id is not shaped so.
func SessionOf(diaID string) int {
	rest, ok := strings.CutPrefix(diaID, "D")
	if !ok {
		return 0
	}
	num, _, ok := strings.Cut(rest, ":")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// LoCoMoResult holds the figures per category and "overall".
type LoCoMoResult map[string]TurnMetrics

// Evaluate searches every scored question in its conversation's channel
// with req as template (Query, Limit and the channel filter are set per
// question) and returns the figures per category and overall.
func (lc *LoCoMoCorpus) Evaluate(ctx context.Context, req engine.SearchRequest) (LoCoMoResult, error) {
	all, _, err := lc.EvaluateEach(ctx, req)
	return all, err
}

// EvaluateDepth is how many results Evaluate asks for per question: ten
// for the turn-level figures, and enough beyond them that the sessions
// of the ranking reach ten for SessionRecall. Hybrid search takes the
// same candidates for any limit up to 50 (max(100, 2*limit) of each
// side), so the first ten are those of a search for ten.
const EvaluateDepth = 50

// EvaluateEach is Evaluate with the figures of each conversation too, in
// lc.Convs order.
func (lc *LoCoMoCorpus) EvaluateEach(ctx context.Context, req engine.SearchRequest) (LoCoMoResult, []LoCoMoResult, error) {
	newAcc := func() map[string]*TurnMetrics {
		acc := map[string]*TurnMetrics{"overall": {}}
		for _, c := range LoCoMoCategories() {
			acc[c] = &TurnMetrics{}
		}
		return acc
	}
	means := func(acc map[string]*TurnMetrics) LoCoMoResult {
		out := LoCoMoResult{}
		for k, m := range acc {
			m.mean()
			out[k] = *m
		}
		return out
	}
	all := newAcc()
	each := make([]LoCoMoResult, len(lc.Convs))
	for i, c := range lc.Convs {
		conv := newAcc()
		for _, q := range c.Questions {
			r := req
			r.Limit = EvaluateDepth
			ranked, err := lc.Ranked(ctx, r, c, q)
			if err != nil {
				return nil, nil, err
			}
			for _, acc := range []map[string]*TurnMetrics{all, conv} {
				acc[q.Category].add(ranked, q.Evidence)
				acc["overall"].add(ranked, q.Evidence)
			}
		}
		each[i] = means(conv)
	}
	return means(all), each, nil
}

// DiaID returns the dia_id of the turn stored as message id ("" for
// none).
func (lc *LoCoMoCorpus) DiaID(id int64) string { return lc.diaOf[id] }

// Ranked searches question q of conversation c in its channel with req as
// template (Query and the channel filter are set; Limit is req's, 10 when
// 0) and returns the dia_ids of the results in rank order.
func (lc *LoCoMoCorpus) Ranked(ctx context.Context, req engine.SearchRequest, c Conversation, q Question) ([]string, error) {
	req.Query = q.Text
	if req.Limit == 0 {
		req.Limit = 10
	}
	req.Filter.ChannelIDs = []string{LoCoMoChannel(c)}
	req.MinScore = everyResult(req.MinScore)
	res, err := lc.Engine.Search(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("question %q: %w", q.Text, err)
	}
	ranked := make([]string, len(res))
	for i, x := range res {
		ranked[i] = lc.diaOf[x.Message.ID]
	}
	return ranked, nil
}
