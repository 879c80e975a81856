package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// hybridFlags are cairn search's flags for modes, ranking and the filters
// added with hybrid search (issue 6).
type hybridFlags struct {
	mode, profile, fusion, where, model string
	wSim, wRec, wConf, halfLife         optFloat
	channelTypes                        stringList
	breadcrumbs                         string
	minWords                            int
}

func addHybridFlags(fs *flag.FlagSet) *hybridFlags {
	h := &hybridFlags{}
	fs.StringVar(&h.mode, "mode", "", "retrieval `MODE`: hybrid (default), semantic or keyword")
	fs.StringVar(&h.profile, "profile", "", "ranking `PROFILE`: "+strings.Join(engine.Profiles(), ", ")+" (default "+engine.DefaultProfile+")")
	fs.StringVar(&h.fusion, "fusion", "", "hybrid fusion `F`: minmax (default), weighted or rrf")
	fs.Var(&h.wSim, "w-similarity", "custom ranking: weight `X` of relevance")
	fs.Var(&h.wRec, "w-recency", "custom ranking: weight `X` of recency")
	fs.Var(&h.wConf, "w-confidence", "custom ranking: weight `X` of confidence")
	fs.Var(&h.halfLife, "half-life-hours", "custom ranking: recency half-life `H` hours (0 = no decay)")
	fs.Var(&h.channelTypes, "channel-type", "only channels of `TYPE` (agent-notes, project, channel)")
	fs.StringVar(&h.breadcrumbs, "has-breadcrumbs", "", "only messages with (true) or without (false) breadcrumbs")
	fs.IntVar(&h.minWords, "min-words", 0, "only messages of at least `N` words")
	fs.StringVar(&h.where, "where", "", "Chroma-style where `JSON` over channel_id, channel_type, agent_name, project_id, timestamp (Unix ms), confidence, message_type, word_count, has_breadcrumbs")
	fs.StringVar(&h.model, "model", "", "embedding model `DIR` (default: $CAIRN_MODEL, else the data dir's models/; none = keyword only)")
	return h
}

func (h *hybridFlags) apply(req *engine.SearchRequest) error {
	req.Mode = engine.SearchMode(h.mode)
	req.Fusion = engine.Fusion(h.fusion)
	req.Ranking.Profile = h.profile
	custom := h.wSim.set || h.wRec.set || h.wConf.set || h.halfLife.set
	if custom {
		if h.profile != "" && h.profile != engine.ProfileCustom {
			return &engine.InvalidError{Field: "profile", Rule: "--w-* and --half-life-hours make a custom profile; do not combine them with --profile " + h.profile}
		}
		req.Ranking.Profile = engine.ProfileCustom
		req.Ranking.Similarity, req.Ranking.Recency, req.Ranking.Confidence = h.wSim.v, h.wRec.v, h.wConf.v
		if h.halfLife.set {
			if math.IsNaN(h.halfLife.v) || h.halfLife.v < 0 || h.halfLife.v > 1e7 {
				return &engine.InvalidError{Field: "half-life-hours", Rule: fmt.Sprintf("must be a number of hours from 0 to 10000000, got %v", h.halfLife.v)}
			}
			req.Ranking.HalfLife = time.Duration(h.halfLife.v * float64(time.Hour))
		}
	}
	req.Filter.ChannelTypes = h.channelTypes
	if h.breadcrumbs != "" {
		b, err := strconv.ParseBool(h.breadcrumbs)
		if err != nil {
			return &engine.InvalidError{Field: "has-breadcrumbs", Rule: fmt.Sprintf("must be true or false, got %q", h.breadcrumbs)}
		}
		req.Filter.HasBreadcrumbs = &b
	}
	if h.minWords < 0 {
		return &engine.InvalidError{Field: "min-words", Rule: fmt.Sprintf("must not be negative, got %d", h.minWords)}
	}
	req.Filter.MinWordCount = h.minWords
	if h.where != "" {
		req.Filter.Where = []byte(h.where)
	}
	return nil
}

// printSearchNotes tells a terminal user why a search was degraded (on
// stderr, so --json output stays one object per result). The plain "no
// model configured" case is silent: keyword search is then the normal mode.
func (e *env) printSearchNotes(resp engine.SearchResponse) {
	for _, n := range resp.Notes {
		if strings.Contains(n, "no embedding model configured") {
			continue
		}
		fmt.Fprintf(e.stderr, "note: %s\n", n)
	}
}
