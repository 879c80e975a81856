package pgcollections_test

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
