//go:build linux

package livecheck

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holderEnv makes the test binary a process that holds a file: open (its
// descriptor kept) or mapped (the descriptor closed once mapped, as
// Cassandra's mmapped readers may), then says so and waits.
const holderEnv = "LIVECHECK_HOLD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(holderEnv); spec != "" {
		how, path, _ := strings.Cut(spec, ":")
		f, err := os.Open(path)
		if err != nil {
			os.Exit(3)
		}
		if how == "map" {
			b, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
			if err != nil {
				os.Exit(4)
			}
			f.Close()
			defer syscall.Munmap(b)
		}
		os.Stdout.WriteString("holding\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hold starts a process holding path (how: "open" or "map") and waits
// until it does.
func hold(t *testing.T, how, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+how+":"+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "holding\n" {
		t.Fatalf("holder did not start: %q %v", line, err)
	}
	return cmd
}

func TestOpenFiles(t *testing.T) {
	for _, how := range []string{"open", "map"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			table := filepath.Join(dir, "ks", "t-0f3e4a70c67c11eeb4a4d93dc8a1f6a2")
			other := filepath.Join(dir, "ks", "u-0f3e4a70c67c11eeb4a4d93dc8a1f6a2")
			for _, d := range []string{table, other} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			data := filepath.Join(table, "nb-1-big-Data.db")
			if err := os.WriteFile(data, make([]byte, 4096), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := OpenFiles([]string{table}); err != nil {
				t.Fatalf("nothing holds the table yet: %v", err)
			}
			cmd := hold(t, how, data)
			err := OpenFiles([]string{other})
			if err != nil {
				t.Fatalf("another table's directory: %v", err)
			}
			err = OpenFiles([]string{table})
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want *Error", err)
			}
			want := "process " + strconv.Itoa(cmd.Process.Pid) + " ("
			if !strings.Contains(le.Why, want) || !strings.Contains(le.Why, data+" open") {
				t.Fatalf("Why = %q, want the process %d and %s", le.Why, cmd.Process.Pid, data)
			}
			if !strings.Contains(err.Error(), "--force") {
				t.Fatalf("the error does not say how to override: %v", err)
			}
		})
	}
}

// A directory that holds no file any process has open is not live, and a
// directory that does not exist is not an error.
func TestOpenFilesNothing(t *testing.T) {
	if err := OpenFiles([]string{t.TempDir(), filepath.Join(t.TempDir(), "missing")}); err != nil {
		t.Fatal(err)
	}
}

func TestCommitLog(t *testing.T) {
	root := t.TempDir()
	table := filepath.Join(root, "data", "ks", "t-0f3e4a70c67c11eeb4a4d93dc8a1f6a2")
	cl := filepath.Join(root, "commitlog")
	for _, d := range []string{table, cl} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(table, "nb-1-big-Data.db")
	os.WriteFile(data, []byte("x"), 0o644)
	if got := CommitLogDirs([]string{table, filepath.Join(table, ".idx"), root}); len(got) != 1 || got[0] != cl {
		t.Fatalf("CommitLogDirs = %v, want [%s]", got, cl)
	}
	seg := filepath.Join(cl, "CommitLog-7-1700000000000.log")
	os.WriteFile(seg, []byte("x"), 0o644)
	sst := time.Now().Add(-time.Hour)
	os.Chtimes(data, sst, sst)
	// Within a drain's grace: stopped cleanly.
	os.Chtimes(seg, sst.Add(30*time.Second), sst.Add(30*time.Second))
	if err := CommitLog([]string{cl}, []string{table}); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(seg, sst.Add(10*time.Minute), sst.Add(10*time.Minute))
	err := CommitLog([]string{cl}, []string{table})
	var le *Error
	if !errors.As(err, &le) || !strings.Contains(le.Why, seg) || !strings.Contains(le.Why, "10m0s after the newest sstable ("+data+")") {
		t.Fatalf("err = %v", err)
	}
}
