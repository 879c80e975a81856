package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// metricSeries counts the series of one metric in a /metrics page.
func metricSeries(page, name string) int {
	n := 0
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, name+"{") {
			n++
		}
	}
	return n
}

// TestServeMetricsLabelsBounded: thousands of distinct unauthenticated
// requests whose tenant segment hides a slash (a%2F...) add no series to
// /metrics: route labels come from the route table, never from the path.
func TestServeMetricsLabelsBounded(t *testing.T) {
	bin := buildCairn(t)
	const token = "t0ken"
	p := startServe(t, bin, t.TempDir(), "--auth-token", token)
	series := func() int {
		t.Helper()
		code, page := httpDo(t, "GET", p.url+"/metrics", token, "")
		if code != 200 {
			t.Fatalf("/metrics: %d", code)
		}
		return metricSeries(page, "cairn_http_requests_total")
	}
	probe := func(i int) string {
		return fmt.Sprintf("%s/api/v2/tenants/a%%2F%d/databases/d/collections", p.url, i)
	}
	// One of each first, so the series the flood may legitimately use exist.
	if code, _ := httpDo(t, "GET", probe(0), "", ""); code != http.StatusUnauthorized {
		t.Fatalf("unauthenticated probe: %d, want 401", code)
	}
	before := series()
	const n = 2000
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				resp, err := http.Get(probe(i + 1))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if after := series(); after > before+1 { // +1: the scrape's own 200 series
		t.Errorf("%d distinct 401 paths grew cairn_http_requests_total from %d to %d series", n, before, after)
	}
}
