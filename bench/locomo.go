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
}

// LoCoMoOptions say how the conversations are stored.
type LoCoMoOptions struct {
	// Captions appends shared photos' captions to the turn text.
	Captions bool
	// AnonymousSenders stores the turns under "speaker-a"/"speaker-b"
	// instead of the speakers' names, so that nothing in the engine knows
	// who is named in a question: plain BM25 for the keyword peer.
	AnonymousSenders bool
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
		var last time.Time
		for _, c := range convs {
			for _, t := range c.Turns {
				if t.At.After(last) {
					last = t.At
				}
			}
		}
		at := last.Add(24 * time.Hour)
		eo.Now = func() time.Time { return at }
	}
	e, err := engine.Open(ctx, dir, eo)
	if err != nil {
		return nil, err
	}
	lc := &LoCoMoCorpus{Convs: convs, Engine: e, diaOf: map[int64]string{}}
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
	if err := e.SyncVectors(ctx, nil); err != nil {
		e.Close()
		return nil, err
	}
	lc.Load = time.Since(start)
	return lc, nil
}

// LoCoMoChannel is the channel of a conversation.
func LoCoMoChannel(c Conversation) string { return "locomo-" + c.ID }

// Close closes the engine.
func (lc *LoCoMoCorpus) Close() error { return lc.Engine.Close() }

// DiaID returns the dia_id of the turn stored as message id.
func (lc *LoCoMoCorpus) DiaID(id int64) string { return lc.diaOf[id] }

// TurnRecall10 is the protocol's turn-level recall@10 of ranked dia ids
// against a question's evidence.
func TurnRecall10(ranked, evidence []string) float64 {
	var m TurnMetrics
	m.add(ranked, evidence)
	return m.Recall10
}

// TurnMetrics are the protocol's turn-level figures over a group of
// questions.
type TurnMetrics struct {
	Recall5, Recall10, Hit10 float64
	Questions                int
}

func (m *TurnMetrics) add(ranked []string, evidence []string) {
	ev := map[string]bool{}
	for _, e := range evidence {
		ev[e] = true
	}
	found := func(k int) int {
		n := 0
		for _, id := range ranked[:min(k, len(ranked))] {
			if ev[id] {
				n++
			}
		}
		return n
	}
	f5, f10 := found(5), found(10)
	m.Recall5 += float64(f5) / float64(len(ev))
	m.Recall10 += float64(f10) / float64(len(ev))
	if f10 > 0 {
		m.Hit10++
	}
	m.Questions++
}

func (m *TurnMetrics) mean() {
	if m.Questions > 0 {
		n := float64(m.Questions)
		m.Recall5, m.Recall10, m.Hit10 = m.Recall5/n, m.Recall10/n, m.Hit10/n
	}
}

// LoCoMoResult holds the figures per category and "overall".
type LoCoMoResult map[string]TurnMetrics

// Evaluate searches every scored question in its conversation's channel
// with req as template (Query, Limit and the channel filter are set per
// question) and returns the figures per category and overall.
func (lc *LoCoMoCorpus) Evaluate(ctx context.Context, req engine.SearchRequest) (LoCoMoResult, error) {
	acc := map[string]*TurnMetrics{"overall": {}}
	for _, c := range LoCoMoCategories() {
		acc[c] = &TurnMetrics{}
	}
	for _, c := range lc.Convs {
		for _, q := range c.Questions {
			r := req
			r.Limit = 10
			ranked, err := lc.Ranked(ctx, r, c, q)
			if err != nil {
				return nil, err
			}
			acc[q.Category].add(ranked, q.Evidence)
			acc["overall"].add(ranked, q.Evidence)
		}
	}
	out := LoCoMoResult{}
	for k, m := range acc {
		m.mean()
		out[k] = *m
	}
	return out, nil
}

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
