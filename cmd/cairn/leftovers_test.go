package main

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFaultKilledBackupRestoreLeaveNothing: a real `cairn backup` and a
// real `cairn restore`, killed with SIGKILL while they write, leave
// temporaries holding plaintext copies; the next `cairn gc`, `cairn
// backup` and `cairn restore` remove them and say so on stderr.
func TestFaultKilledBackupRestoreLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildCairn(t)
	data := t.TempDir()
	env := append(os.Environ(), "CAIRN_MODEL=none", "CAIRN_DATA_DIR="+data, "HOME="+t.TempDir())
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("note", "--agent", "ann", "the vault code is zqxplaintextmarker")
	// A large model file makes the archive slow enough to kill mid-write.
	model := make([]byte, 48<<20)
	rand.Read(model)
	if err := os.MkdirAll(filepath.Join(data, "models", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "models", "x", "model.safetensors"), model, 0o600); err != nil {
		t.Fatal(err)
	}
	backups := t.TempDir()
	archive := filepath.Join(backups, "b.cairn.zst")
	restored := filepath.Join(t.TempDir(), "r")
	// temps lists what a killed backup or restore may leave, wherever.
	temps := func() []string {
		var out []string
		for _, dir := range []string{data, backups, filepath.Dir(data), filepath.Dir(restored)} {
			ents, _ := os.ReadDir(dir)
			for _, en := range ents {
				n := en.Name()
				if strings.HasPrefix(n, ".cairn-backup-") || strings.Contains(n, ".tmp-") || strings.Contains(n, ".restore-") {
					out = append(out, filepath.Join(dir, n))
				}
			}
		}
		return out
	}
	// killDuring starts cairn args and SIGKILLs it once a temporary whose
	// name contains part holds bytes; it retries when the command finished
	// first.
	killDuring := func(part string, args ...string) {
		t.Helper()
		for try := 0; try < 5; try++ {
			cmd := exec.Command(bin, args...)
			cmd.Env = env
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			for killed := false; !killed; {
				select {
				case <-done:
					killed = true // finished first: try again
					if args[0] == "backup" {
						os.Remove(archive)
					} else {
						os.RemoveAll(restored)
					}
					for _, p := range temps() {
						os.RemoveAll(p)
					}
					continue
				default:
				}
				for _, p := range temps() {
					if fi, err := os.Stat(p); err == nil && strings.Contains(filepath.Base(p), part) && (fi.IsDir() || fi.Size() > 0) {
						cmd.Process.Kill()
						<-done
						return
					}
				}
				time.Sleep(time.Millisecond)
			}
		}
		t.Fatalf("cairn %s finished before it could be killed, 5 times", strings.Join(args, " "))
	}
	for _, next := range [][]string{{"gc"}, {"backup", "--force", archive}} {
		killDuring(".tmp-", "backup", archive)
		left := temps()
		if len(left) == 0 {
			t.Fatal("a killed backup left nothing: the test proves nothing")
		}
		t.Logf("a killed backup left %v", left)
		out := run(next...)
		if !strings.Contains(out, "left by a killed backup") {
			t.Errorf("cairn %s did not say it removed the leftovers: %s", strings.Join(next, " "), out)
		}
		if left := temps(); len(left) != 0 {
			t.Fatalf("after cairn %s: %v left", strings.Join(next, " "), left)
		}
	}
	killDuring(".restore-", "restore", archive, restored)
	left := []string{}
	ents, _ := os.ReadDir(filepath.Dir(restored))
	for _, en := range ents {
		left = append(left, en.Name())
	}
	if len(left) == 0 {
		t.Fatal("a killed restore left nothing: the test proves nothing")
	}
	t.Logf("a killed restore left %v", left)
	out := run("restore", archive, restored)
	if !strings.Contains(out, "left by a killed backup or restore") {
		t.Errorf("restore did not say it removed the leftovers: %s", out)
	}
	ents, _ = os.ReadDir(filepath.Dir(restored))
	if len(ents) != 1 || ents[0].Name() != "r" {
		t.Errorf("after restore, beside the restored dir: %v", ents)
	}
}
