package searchwire_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/searchwire"
	"github.com/cairn-dev/cairn/engine"
)

// request decodes spec as the HTTP API and the MCP tool do and returns
// the engine request it stands for.
func request(t *testing.T, spec string) (engine.SearchRequest, error) {
	t.Helper()
	var s searchwire.SearchSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return engine.SearchRequest{}, err
	}
	return s.Request()
}

// TestPlanSearchShapes: the implementation plan's search_messages
// arguments (filters{channel_ids, sender_ids, message_type,
// min_confidence, since} and ranking_profile as a name or custom weights)
// are the same search as the flat fields; giving a filter both ways is
// refused naming it.
func TestPlanSearchShapes(t *testing.T) {
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct{ plan, flat string }{
		{`{"query":"deploy","mode":"keyword","filters":{"channel_ids":["global:general"],"sender_ids":["ann"]}}`,
			`{"query":"deploy","mode":"keyword","channels":["global:general"],"senders":["ann"]}`},
		{`{"query":"deploy","mode":"keyword","filters":{"message_type":"decision","min_confidence":0.5}}`,
			`{"query":"deploy","mode":"keyword","types":["decision"],"min_confidence":0.5}`},
		{`{"query":"deploy blue green","filters":{"channel_ids":["global:general"]},"ranking_profile":"recent"}`,
			`{"query":"deploy blue green","channels":["global:general"],"profile":"recent"}`},
		// Weights left out take the plan's defaults (half-life 168 hours).
		{`{"query":"deploy","ranking_profile":{"similarity_weight":0,"decay_weight":0,"confidence_weight":1}}`,
			`{"query":"deploy","weights":{"confidence":1,"half_life_hours":168}}`},
		{`{"query":"deploy","ranking_profile":{"confidence_weight":1}}`,
			`{"query":"deploy","profile":"custom","weights":{"similarity":0.5,"recency":0.3,"confidence":1,"half_life_hours":168}}`},
		{`{"query":"deploy","filters":{"since":"` + since + `"}}`, `{"query":"deploy","since":"` + since + `"}`},
	} {
		plan, err := request(t, c.plan)
		if err != nil {
			t.Errorf("%s: %v", c.plan, err)
			continue
		}
		flat, err := request(t, c.flat)
		if err != nil {
			t.Errorf("%s: %v", c.flat, err)
			continue
		}
		if !reflect.DeepEqual(plan, flat) {
			t.Errorf("%s: %+v\nwant (as %s) %+v", c.plan, plan, c.flat, flat)
		}
	}
	for spec, field := range map[string]string{
		`{"channels":["a"],"filters":{"channel_ids":["b"]}}`: "filters.channel_ids",
		`{"filters":{"min_confidence":2}}`:                   "filters.min_confidence",
		`{"profile":"recent","ranking_profile":"quality"}`:   "ranking_profile",
		`{"ranking_profile":"telepathy"}`:                    "profile",
		`{"ranking_profile":{"similarity_weight":-1}}`:       "weights.similarity",
		`{"query":"x","where":{"age_days":{"$eq":3}}}`:       "where",
		`{"query":"x","where":{"age_days":{"$lt":-1}}}`:      "where",
	} {
		_, err := request(t, spec)
		var inv *engine.InvalidError
		if !errors.As(err, &inv) || inv.Field != field {
			t.Errorf("%s: %v, want invalid %s", spec, err, field)
		}
	}
	if _, err := request(t, `{"ranking_profile":{"simillarity_weight":1}}`); err == nil {
		t.Error("unknown weight name accepted")
	}
}

// TestSpecRules: the rules the spec adds to the engine's, each naming its
// JSON field: the limit's bound, hours that fit a duration, weights only
// with the custom profile (even all zero).
func TestSpecRules(t *testing.T) {
	for spec, field := range map[string]string{
		`{"limit":1001}`:            "limit",
		`{"limit":-1}`:              "limit",
		`{"max_age_hours":1000001}`: "max_age_hours",
		`{"weights":{"similarity":1,"half_life_hours":-1}}`: "weights.half_life_hours",
		`{"profile":"balanced","weights":{}}`:               "profile",
		`{"weights":{}}`:                                    "weights",
		`{"min_word_count":-1}`:                             "min_word_count",
		`{"demote_stale":2}`:                                "demote_stale",
	} {
		_, err := request(t, spec)
		var inv *engine.InvalidError
		if !errors.As(err, &inv) || inv.Field != field {
			t.Errorf("%s: %v, want invalid %s", spec, err, field)
		}
	}
	if req, err := request(t, `{"limit":1000,"max_age_hours":1000000}`); err != nil || req.Limit != 1000 || req.Filter.MaxAge != time.Duration(engine.MaxHours)*time.Hour {
		t.Errorf("at the bounds: %+v, %v", req, err)
	}
}
