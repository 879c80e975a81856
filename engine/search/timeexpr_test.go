package search_test

import (
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

func TestTimeMentions(t *testing.T) {
	now := time.Date(2023, 10, 27, 15, 0, 0, 0, time.UTC) // a Friday
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		query, rest string
		want        []search.TimeRange
	}{
		{"What setback did Melanie face in October 2023?", "What setback did Melanie face ?", []search.TimeRange{{day(2023, 10, 1), day(2023, 11, 1)}}},
		{"What painting did she show on October 13, 2023?", "What painting did she show ?", []search.TimeRange{{day(2023, 10, 13), day(2023, 10, 14)}}},
		{"What did Gina find for her store on 1 February, 2023?", "What did Gina find for her store ?", []search.TimeRange{{day(2023, 2, 1), day(2023, 2, 2)}}},
		{"what happened on the 13th of oct 2023", "what happened on the", []search.TimeRange{{day(2023, 10, 13), day(2023, 10, 14)}}},
		{"release notes 2023-10-13", "release notes", []search.TimeRange{{day(2023, 10, 13), day(2023, 10, 14)}}},
		// A bare month is the latest one that has begun.
		{"When did Melanie go camping in June?", "When did Melanie go camping ?", []search.TimeRange{{day(2023, 6, 1), day(2023, 7, 1)}}},
		{"trips during December", "trips", []search.TimeRange{{day(2022, 12, 1), day(2023, 1, 1)}}},
		{"How many times has she gone to the beach in 2023?", "How many times has she gone to the beach ?", []search.TimeRange{{day(2023, 1, 1), day(2024, 1, 1)}}},
		// Relative expressions stay in the query.
		{"what did we decide last week", "what did we decide last week", []search.TimeRange{{day(2023, 10, 16), day(2023, 10, 23)}}},
		{"python get today's date", "python get today's date", []search.TimeRange{{day(2023, 10, 27), day(2023, 10, 28)}}},
		{"deploys yesterday", "deploys yesterday", []search.TimeRange{{day(2023, 10, 26), day(2023, 10, 27)}}},
		{"budget last month", "budget last month", []search.TimeRange{{day(2023, 9, 1), day(2023, 10, 1)}}},
		{"goals this year", "goals this year", []search.TimeRange{{day(2023, 1, 1), day(2024, 1, 1)}}},
		// Not times: "may" the verb, a number; an impossible day leaves its month;
		// a query that is only a date is searched as is.
		{"we may need a bigger index", "we may need a bigger index", nil},
		{"top 2023 results", "top 2023 results", nil},
		{"31 June 2023 notes", "31 notes", []search.TimeRange{{day(2023, 6, 1), day(2023, 7, 1)}}},
		{"October 2023", "October 2023", []search.TimeRange{{day(2023, 10, 1), day(2023, 11, 1)}}},
	} {
		rest, got := search.TimeMentions(c.query, now)
		if rest != c.rest {
			t.Errorf("%q: rest %q, want %q", c.query, rest, c.rest)
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: ranges %v, want %v", c.query, got, c.want)
			continue
		}
		for i := range got {
			if !got[i].From.Equal(c.want[i].From) || !got[i].To.Equal(c.want[i].To) {
				t.Errorf("%q: range %d = %v..%v, want %v..%v", c.query, i, got[i].From, got[i].To, c.want[i].From, c.want[i].To)
			}
		}
	}
}
