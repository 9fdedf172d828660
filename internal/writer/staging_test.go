package writer

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

// TestHelperStagingOwner is the child process of TestKilledOwner: it
// stages one file, optionally commits halfway (COMMIT written, some files
// moved), prints the staging directory and waits to be killed.
func TestHelperStagingOwner(t *testing.T) {
	dest := os.Getenv("STAGING_HELPER_DEST")
	if dest == "" {
		t.Skip("helper process only")
	}
	// A commit killed halfway: the marker and one file get renamed.
	commit := os.Getenv("STAGING_HELPER_COMMIT") != ""
	var fsys vfs.FS = vfs.Default
	if commit {
		fsys = errorfs.New(vfs.Default).CrashAt(2, errorfs.Renames)
	}
	st, err := NewStaging(fsys, dest, "oa-1-big-")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"Index.db", "Data.db", "TOC.txt"} {
		if err := st.WriteFile("oa-1-big-"+c, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if commit {
		if err := st.Commit(); !errors.Is(err, errorfs.ErrCrashed) {
			t.Fatalf("commit: %v", err)
		}
		// The injected crash released the lock, as the kernel does for a
		// dead process; this one still runs: take it again to stand for
		// the process that is killed.
		if st.lock, err = vfs.Default.Lock(st.tmp); err != nil {
			t.Fatal(err)
		}
	}
	os.Stdout.WriteString(st.Dir() + "\n")
	select {}
}

// A killed process's staging directory is recovered by the next
// NewStaging, and only once the process is really gone: the kernel drops
// its flock when it dies.
func TestKilledOwner(t *testing.T) {
	for _, commit := range []bool{false, true} {
		dest := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStagingOwner$")
		cmd.Env = append(os.Environ(), "STAGING_HELPER_DEST="+dest)
		if commit {
			cmd.Env = append(cmd.Env, "STAGING_HELPER_COMMIT=1")
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("helper: %v", err)
		}
		staged := strings.TrimSpace(line)

		// While the owner lives, its directory is not touched.
		notes, err := Recover(nil, dest)
		if err != nil || len(notes) != 0 {
			cmd.Process.Kill()
			t.Fatalf("owner alive: recovered %v, %v", notes, err)
		}
		if _, err := os.Stat(staged); err != nil {
			cmd.Process.Kill()
			t.Fatalf("owner alive: staging directory gone: %v", err)
		}
		cmd.Process.Kill()
		cmd.Wait()

		st, err := NewStaging(nil, dest, "oa-2-big-")
		if err != nil {
			t.Fatal(err)
		}
		rec := st.Recovered()
		st.Abort()
		if len(rec) != 1 || !strings.Contains(rec[0], staged) {
			t.Fatalf("commit %v: recovered %v, want the staging directory %s named", commit, rec, staged)
		}
		if _, err := os.Stat(staged); !os.IsNotExist(err) {
			t.Fatalf("commit %v: staging directory still there: %v", commit, err)
		}
		_, derr := os.Stat(filepath.Join(dest, "oa-1-big-Data.db"))
		if commit {
			if derr != nil {
				t.Fatalf("decided commit not completed: %v", derr)
			}
			for _, c := range []string{"Index.db", "Data.db", "TOC.txt"} {
				if b, err := os.ReadFile(filepath.Join(dest, "oa-1-big-"+c)); err != nil || string(b) != c {
					t.Fatalf("%s after completion: %q %v", c, b, err)
				}
			}
		} else if !os.IsNotExist(derr) {
			t.Fatalf("an unfinished staging produced a Data.db: %v", derr)
		}
	}
}

// A destination NewStaging created is removed again by Abort when empty,
// so a failed run leaves nothing behind.
func TestAbortRemovesCreatedDest(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "a", "b")
	st, err := NewStaging(nil, dest, "oa-1-big-")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(st.Dir()) != dest {
		t.Fatalf("staging %s is not inside the destination %s", st.Dir(), dest)
	}
	st.Abort()
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("destination left after Abort: %v", err)
	}
}

// TestFileStartsWriteback: a staged file hands what it has written to
// the disk's writeback every vfs.WritebackEvery (so that its fsync at Close
// has little left), and what it holds after Close is what was written,
// in pieces of every size across those steps.
func TestFileStartsWriteback(t *testing.T) {
	st, err := NewStaging(nil, t.TempDir(), "oa-1-big-")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	f, err := st.Create("oa-1-big-Data.db")
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := 0; len(want) < 3*vfs.WritebackEvery+12345; i++ {
		p := make([]byte, (i*7919)%(1<<20)+1)
		for j := range p {
			p[j] = byte(i + j)
		}
		if _, err := f.Write(p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
	}
	if f.wb.Started() < 3*vfs.WritebackEvery || f.wb.Started() > f.Pos() {
		t.Errorf("writeback started for %d of %d bytes written", f.wb.Started(), f.Pos())
	}
	path := f.Path()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the file holds %d bytes, not the %d written", len(got), len(want))
	}
}
