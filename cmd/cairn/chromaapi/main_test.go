package chromaapi_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/pgcollections"
	"github.com/cairn-dev/cairn/vecstore"
)

var (
	flagRecord      = flag.Bool("record", false, "record the expectations of testdata/chroma/cases from the real Chroma server")
	flagRecordCairn = flag.Bool("record-divergences", false, "record cairn's answers for the steps that declare a divergence")
	flagNoLive      = flag.Bool("no-live", false, "do not start the real Chroma server (skip live comparisons)")
)

// jsDir is the directory holding package.json and node_modules of the JS peers.
var jsDir = filepath.Join("..", "..", "..", "testdata", "js")

// realChroma is the real Chroma 1.0.0 server shared by the whole test
// binary: started on first use, killed by TestMain.
var realChroma struct {
	once sync.Once
	url  string
	err  error
	cmd  *exec.Cmd
	dir  string
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := pgtest.Main(m)
	if c := realChroma.cmd; c != nil && c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	}
	if realChroma.dir != "" {
		_ = os.RemoveAll(realChroma.dir)
	}
	os.Exit(code)
}

// nodeAvailable reports whether the JS peers are installed. Under CI=true a
// missing install fails the test instead of skipping it.
func nodeAvailable(t testing.TB) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(jsDir, "node_modules", "chromadb", "dist", "cli.mjs"))
	if err == nil {
		if _, err = exec.LookPath("node"); err == nil {
			return true
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("JS peers not installed (%v): run `npm ci --prefix testdata/js`", err)
	}
	t.Skipf("JS peers not installed (%v); run `npm ci --prefix testdata/js`", err)
	return false
}

// chromaURL returns the base URL of the shared real Chroma server, starting it
// if needed, or skips the test when it cannot run here.
func chromaURL(t testing.TB) string {
	t.Helper()
	if *flagNoLive && !*flagRecord {
		t.Skip("-no-live")
	}
	if !nodeAvailable(t) {
		return ""
	}
	realChroma.once.Do(func() { realChroma.url, realChroma.err = startChroma() })
	if realChroma.err != nil {
		t.Fatalf("starting the real Chroma server: %v", realChroma.err)
	}
	return realChroma.url
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startChroma() (string, error) {
	dir, err := os.MkdirTemp("", "cairn-chroma-*")
	if err != nil {
		return "", err
	}
	realChroma.dir = dir
	url, cmd, err := startChromaIn(dir)
	realChroma.cmd = cmd
	return url, err
}

// startChromaIn starts a real Chroma 1.0.0 server with its data and log in
// dir, in its own process group, and waits for its heartbeat.
func startChromaIn(dir string) (string, *exec.Cmd, error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cli, _ := filepath.Abs(filepath.Join(jsDir, "node_modules", "chromadb", "dist", "cli.mjs"))
	cmd := exec.Command("node", cli, "run", "--path", filepath.Join(dir, "data"), "--host", "127.0.0.1",
		"--port", strconv.Itoa(port))
	cmd.Dir = jsDir
	log, err := os.Create(filepath.Join(dir, "chroma.log"))
	if err != nil {
		return "", nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if !awaitHeartbeat(url, 3*time.Minute) {
		out, _ := os.ReadFile(filepath.Join(dir, "chroma.log"))
		return "", cmd, errors.New("no heartbeat within 60s; log:\n" + string(out))
	}
	return url, cmd, nil
}

// freshChroma starts a real Chroma 1.0.0 server of the test's own (empty),
// for comparisons that need a server no other test wrote to; it is killed
// when the test ends.
func freshChroma(t *testing.T) string {
	t.Helper()
	if *flagNoLive && !*flagRecord {
		t.Skip("-no-live")
	}
	if !nodeAvailable(t) {
		return ""
	}
	url, cmd, err := startChromaIn(t.TempDir())
	if cmd != nil {
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	if err != nil {
		t.Fatalf("starting a real Chroma server: %v", err)
	}
	return url
}

// awaitHeartbeat polls a Chroma-compatible server's heartbeat until it
// answers 200 or the timeout passes.
func awaitHeartbeat(url string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(url + "/api/v2/heartbeat")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return true
			}
		}
	}
	return false
}

// cairnServer serves a fresh collection store through the Chroma adapter on
// 127.0.0.1 and returns its URL.
func cairnServer(t testing.TB, opts chromaapi.Options) (string, *vecstore.Store) {
	t.Helper()
	ctx := context.Background()
	coll, err := vecstore.Open(ctx, t.TempDir(), vecstore.Options{AllowReset: opts.AllowReset})
	if err != nil {
		t.Fatal(err)
	}
	opts.Collections = coll
	srv := httptest.NewServer(chromaapi.New(opts))
	t.Cleanup(func() {
		srv.Close()
		if err := coll.Close(); err != nil {
			t.Errorf("closing the collection store: %v", err)
		}
	})
	return srv.URL, coll
}

// cairnPGServer serves fresh PostgreSQL collections (a new database on the
// test PostgreSQL server) through the Chroma adapter on 127.0.0.1 and
// returns its URL.
func cairnPGServer(t testing.TB, opts chromaapi.Options) string {
	t.Helper()
	pg, err := pgcollections.Open(context.Background(), pgtest.Database(t), pgcollections.Options{AllowReset: opts.AllowReset})
	if err != nil {
		t.Fatal(err)
	}
	opts.Collections = pg
	srv := httptest.NewServer(chromaapi.New(opts))
	t.Cleanup(func() {
		srv.Close()
		_ = pg.Close()
	})
	return srv.URL
}
