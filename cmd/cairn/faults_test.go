package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/racedetector"
	"github.com/cairn-dev/cairn/internal/rawscan"
)

// markerHits returns the files under dir whose raw bytes contain marker.
func markerHits(t *testing.T, dir, marker string) []string {
	t.Helper()
	hits, err := rawscan.FilesContaining(dir, marker)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestFaultDeleteThenSIGKILL: a real `cairn serve` acknowledges deletes of
// a message (cairn API) and of a Chroma document and is killed with SIGKILL
// right after the answers; no byte of either deleted text is in any file of
// the data dir, nor in the dir after a restart, nor in a backup taken then.
func TestFaultDeleteThenSIGKILL(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("builds and runs the binary: left to the run without -race")
	}
	bin := buildCairn(t)
	data := t.TempDir()
	const rounds = 3
	requests, kills := 0, 0
	for round := range rounds {
		p := startServe(t, bin, data)
		marker := fmt.Sprintf("zqxsecretmarker%dround", round)
		api := p.url + "/api/cairn/v1"
		for i := range 40 {
			code, _ := httpDo(t, "POST", api+"/notes", "", fmt.Sprintf(`{"agent":"a","content":"ordinary note %d of round %d"}`, i, round))
			requests++
			if code != 201 && code != 200 {
				t.Fatalf("note: %d", code)
			}
		}
		code, body := httpDo(t, "POST", api+"/notes", "", `{"agent":"a","content":"the vault code is `+marker+` do not share"}`)
		requests++
		var res struct{ ID int64 }
		if err := json.Unmarshal([]byte(body), &res); err != nil || code/100 != 2 {
			t.Fatalf("note: %d %s", code, body)
		}
		colls := p.url + "/api/v2/tenants/default_tenant/databases/default_database/collections"
		code, body = httpDo(t, "POST", colls, "", fmt.Sprintf(`{"name":"docs%d"}`, round))
		requests++
		var coll struct{ ID string }
		if err := json.Unmarshal([]byte(body), &coll); err != nil || code != 200 {
			t.Fatalf("create collection: %d %s", code, body)
		}
		for i := range 20 {
			doc := fmt.Sprintf("kept document %d", i)
			if i == 7 {
				doc = "chroma secret " + marker + "chroma"
			}
			code, body = httpDo(t, "POST", colls+"/"+coll.ID+"/add", "", fmt.Sprintf(`{"ids":["d%d"],"embeddings":[[%d,1,0]],"documents":[%q]}`, i, i, doc))
			requests++
			if code/100 != 2 {
				t.Fatalf("add: %d %s", code, body)
			}
		}
		if len(markerHits(t, data, marker)) == 0 {
			t.Fatal("marker not on disk before the deletes: the test proves nothing")
		}
		if code, body = httpDo(t, "DELETE", fmt.Sprintf("%s/messages/%d", api, res.ID), "", ""); code != 200 {
			t.Fatalf("delete message: %d %s", code, body)
		}
		if code, body = httpDo(t, "POST", colls+"/"+coll.ID+"/delete", "", `{"ids":["d7"]}`); code/100 != 2 {
			t.Fatalf("delete record: %d %s", code, body)
		}
		requests += 2
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = p.cmd.Wait()
		kills++
		if hits := markerHits(t, data, marker); len(hits) != 0 {
			t.Fatalf("round %d: deleted text in %v after SIGKILL", round, hits)
		}
	}
	// Restart (recovery), check, then a backup: still nothing.
	p := startServe(t, bin, data)
	if code, _ := httpDo(t, "GET", p.url+"/api/v2/heartbeat", "", ""); code != 200 {
		t.Fatalf("heartbeat after the kills: %d", code)
	}
	// Every acknowledged write is there: 40 notes and 19 documents a round.
	lost := 0
	_, body := httpDo(t, "GET", p.url+"/api/cairn/v1/stats", "", "")
	var st struct{ Messages int }
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	lost += 40*rounds - st.Messages
	colls := p.url + "/api/v2/tenants/default_tenant/databases/default_database/collections"
	for round := range rounds {
		_, body := httpDo(t, "GET", fmt.Sprintf("%s/docs%d", colls, round), "", "")
		var coll struct{ ID string }
		if err := json.Unmarshal([]byte(body), &coll); err != nil {
			t.Fatal(err)
		}
		_, body = httpDo(t, "GET", colls+"/"+coll.ID+"/count", "", "")
		var n int
		if err := json.Unmarshal([]byte(body), &n); err != nil {
			t.Fatalf("count: %s", body)
		}
		lost += 19 - n
	}
	if lost != 0 {
		t.Fatalf("%d acknowledged writes lost", lost)
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	archive := filepath.Join(t.TempDir(), "after.zst")
	if out, err := exec.Command(bin, "--data-dir", data, "backup", archive).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if out, err := exec.Command(bin, "restore", archive, restored).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	for round := range rounds {
		marker := fmt.Sprintf("zqxsecretmarker%dround", round)
		if hits := append(markerHits(t, data, marker), markerHits(t, restored, marker)...); len(hits) != 0 {
			t.Fatalf("deleted text in %v", hits)
		}
	}
	t.Logf("fault counts: requests tried %d, kills survived %d, acknowledged writes lost %d, bytes of deleted text found 0", requests, kills, lost)
}

// TestFaultFullDiskReads: with no room to grow any file (the process runs
// under `ulimit -f 0`, which fails every write that extends a file as a
// full disk does), the read-only commands still answer; a write fails
// cleanly and leaves the data as it was.
func TestFaultFullDiskReads(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("builds and runs the binary: left to the run without -race")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := buildCairn(t)
	data := t.TempDir()
	for _, text := range []string{"the deploy runs from main", "rollbacks need a tag"} {
		if out, err := exec.Command(bin, "--data-dir", data, "note", "--agent", "a", text).CombinedOutput(); err != nil {
			t.Fatalf("note: %v\n%s", err, out)
		}
	}
	full := func(args ...string) (string, error) {
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 0 && exec "$0" "$@"`, bin, "--data-dir", data}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"check"}, {"search", "deploy"}, {"show", "1"}, {"stats"}, {"agents"}, {"notes", "--agent", "a"}, {"sessions"}} {
		out, err := full(args...)
		if err != nil {
			t.Errorf("cairn %s on a full disk: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := full("note", "--agent", "a", "this write cannot fit")
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 1 {
		t.Errorf("note on a full disk: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--data-dir", data, "search", "write cannot fit").CombinedOutput(); err != nil || strings.Contains(string(out), "cannot fit") {
		t.Errorf("after the failed write: %v\n%s", err, out)
	}
}

// TestFaultDiskFullMessage: the CLI words ErrDiskFull without the paths the
// error chain carries.
func TestFaultDiskFullMessage(t *testing.T) {
	var stderr bytes.Buffer
	err := fmt.Errorf("engine: open /home/someone/.local/share/cairn/cairn.db: %w", engine.ErrDiskFull)
	if code := report(&stderr, err); code != 1 || strings.Contains(stderr.String(), "/home/someone") || !strings.Contains(stderr.String(), "disk is full") {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
}
