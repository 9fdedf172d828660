package split

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

var crashTrials = flag.Int("crash.trials", 0, "extra crash points in the split crash tests (0: the default set, a few seconds)")

// crashSize cuts the crash tests' 60-partition table into four outputs.
const crashSize = 8 << 10

func crashOptions() InPlaceOptions {
	return InPlaceOptions{Options: Options{MaxSize: crashSize, ResetLevel: true}, Op: txnlog.OpUnknown, Snapshot: "pre-split", Force: true}
}

// afterCrash checks a table directory a killed split left, both ways out:
// Cassandra's startup cleanup (txnlog.RemoveUnfinishedLeftovers) leaves
// either the source or all of its outputs live, never both and never a
// part; the next run finishes or rolls back and splits, leaving the
// outputs alone and no log.
func (n *node) afterCrash(t *testing.T, trial string) (committed bool) {
	t.Helper()
	saved := n.data + ".saved"
	if out, err := exec.Command("cp", "-a", n.data, saved).CombinedOutput(); err != nil {
		t.Fatalf("%s: cp: %v %s", trial, err, out)
	}
	if _, err := txnlog.RemoveUnfinishedLeftovers(vfs.Default, n.table); err != nil {
		t.Fatalf("%s: Cassandra would refuse to start: %v", trial, err)
	}
	committed, err := n.checkOneCopy(t, crashSize, nil)
	if err != nil {
		t.Fatalf("%s: after Cassandra's startup cleanup: %v", trial, err)
	}
	os.RemoveAll(n.data)
	if err := os.Rename(saved, n.data); err != nil {
		t.Fatal(err)
	}
	rep, err := InPlace([]string{n.data}, crashOptions())
	if err != nil || len(rep.Failed) != 0 {
		t.Fatalf("%s: rerun: %v %+v", trial, err, rep.Failed)
	}
	done, err := n.checkOneCopy(t, crashSize, nil)
	if err != nil || !done {
		t.Fatalf("%s: after the rerun: split %v: %v", trial, done, err)
	}
	n.noLogs(t, trial)
	return committed
}

// TestCrashInPlace stops an in-place split through the FS seam (nothing
// after the point reaches the disk, as with kill -9) before every change
// it makes: the snapshot's links, each output's ADD record, files created,
// chmodded, written and fsynced, REMOVE, COMMIT, the source's files
// unlinked, the log removed; then at random byte counts (torn files and
// log lines). After each, both ways out leave the source or its complete
// outputs (afterCrash).
func TestCrashInPlace(t *testing.T) {
	var ops []string
	n := newNode(t, 60)
	efs := errorfs.New(vfs.Default).Trace(func(op errorfs.Op) {
		if errorfs.Changes(op) {
			ops = append(ops, op.Kind.String()+" "+filepath.Base(op.Path))
		}
	})
	rep, err := inPlaceOn(efs, []string{n.data}, crashOptions())
	if err != nil || len(rep.Failed) != 0 {
		t.Fatalf("a full run: %v %+v", err, rep.Failed)
	}
	var outputs int
	var bytes int64
	for _, r := range rep.SSTables {
		outputs += len(r.Outputs)
		bytes += r.After
	}
	t.Logf("a full run writes %d sstables (%d bytes) in %d changes", outputs, bytes, len(ops))
	// Every change of the first output (its ADD record, snapshot links
	// before it, its files) and of the end (the last ADD on: REMOVE,
	// COMMIT, the source's files, the log); a sample of the outputs
	// between, whose changes are the first's over again (all of them with
	// -crash.trials).
	var adds []int
	for i, op := range ops {
		if strings.HasPrefix(op, "open-append ") && strings.HasSuffix(op, ".log") {
			adds = append(adds, i)
		}
	}
	rng := rand.New(rand.NewPCG(21, 22))
	var points []int
	for k := range len(ops) + 1 {
		if *crashTrials > 0 || k <= adds[1] || k >= adds[outputs-1] || rng.IntN(16) == 0 {
			points = append(points, k)
		}
	}
	committed := 0
	for _, k := range points {
		n := newNode(t, 60)
		inPlaceOn(errorfs.New(vfs.Default).CrashAt(int64(k), errorfs.Changes), []string{n.data}, crashOptions())
		what := "the end"
		if k < len(ops) {
			what = ops[k]
		}
		if n.afterCrash(t, fmt.Sprintf("crash before change %d (%s)", k, what)) {
			committed++
		}
	}
	trials := 4
	if *crashTrials > 0 {
		trials = *crashTrials
	}
	for range trials {
		n := newNode(t, 60)
		at := rng.Int64N(bytes + 1)
		inPlaceOn(errorfs.New(vfs.Default).CrashAfterBytes(at), []string{n.data}, crashOptions())
		n.afterCrash(t, fmt.Sprintf("crash at byte %d", at))
	}
	t.Logf("%d crash points, %d of them after COMMIT", len(points)+trials, committed)
}

// TestCrashWrite kills an out-of-place split through the FS seam at
// random points (a rename, any other change, a byte count): the output
// directory never shows an sstable that is not whole, the source never
// changes, and the next run into the directory completes it to exactly
// what an uninterrupted run writes.
func TestCrashWrite(t *testing.T) {
	n := newNode(t, 60)
	srcBefore := partitionLines(t, n.big)
	o := Options{MaxSize: crashSize}
	full := filepath.Join(tempRoot(t), "full")
	res, err := Write(n.big, full, o)
	if err != nil || len(res.Outputs) < 3 {
		t.Fatalf("%v %+v", err, res)
	}
	want := hashDir(t, full)
	var total int64
	for _, o := range res.Outputs {
		total += o.Size
	}
	trials := 16
	if *crashTrials > 0 {
		trials = *crashTrials
	}
	rng := rand.New(rand.NewPCG(23, 24))
	completed := 0
	for i := range trials {
		out := filepath.Join(tempRoot(t), "out")
		efs := errorfs.New(vfs.Default)
		var at string
		switch rng.IntN(3) {
		case 0:
			k := rng.Int64N(int64(len(want)) + 2)
			efs.CrashAt(k, errorfs.Renames)
			at = fmt.Sprintf("rename %d", k)
		case 1:
			k := rng.Int64N(int64(4*len(want)) + 10)
			efs.CrashAt(k, errorfs.Changes)
			at = fmt.Sprintf("change %d", k)
		default:
			k := rng.Int64N(total + 1)
			efs.CrashAfterBytes(k)
			at = fmt.Sprintf("byte %d", k)
		}
		if _, err := writeOn(efs, n.big, out, o); err != nil && !errors.Is(err, errorfs.ErrCrashed) {
			t.Fatalf("trial %d (%s): %v", i, at, err)
		}
		got := hashDir(t, out)
		for _, f := range format.Find([]string{out}, format.FindOptions{}).SSTables {
			var md *format.MissingDataError
			if f.Err != nil && !errors.As(f.Err, &md) {
				t.Fatalf("trial %d (%s): %v", i, at, f.Err)
			}
			if f.Err != nil {
				continue
			}
			d, _, _ := format.ParseDescriptor(f.Path)
			for name, h := range want {
				if strings.HasPrefix(name, d.Prefix()) && got[name] != h {
					t.Fatalf("trial %d (%s): %s is visible but %s is not the full run's", i, at, f.Path, name)
				}
			}
		}
		recovered, _, err := PrepareOut(out, false)
		if err == nil {
			_, err = Write(n.big, out, o)
			if err != nil {
				t.Fatalf("trial %d (%s): rerun: %v", i, at, err)
			}
		} else if !strings.Contains(err.Error(), "already holds") {
			t.Fatalf("trial %d (%s): rerun: %v", i, at, err)
		}
		if len(recovered) > 0 {
			completed++
		}
		if got := hashDir(t, out); !maps.Equal(got, want) {
			t.Fatalf("trial %d (%s): after the rerun the output holds %v, an uninterrupted run %v", i, at, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
	if got := partitionLines(t, n.big); !slices.Equal(got, srcBefore) {
		t.Fatal("the source changed")
	}
	t.Logf("%d trials; %d found leftovers to complete or remove", trials, completed)
}

// hashDir hashes every regular file directly in dir by name.
func hashDir(t testing.TB, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}
