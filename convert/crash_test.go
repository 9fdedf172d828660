package convert

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/verify"
)

func hashDir(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
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

func stagingDirs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestCrashAnywhere kills the conversion at random points through the FS
// seam (errorfs: a byte count across all files written, a rename, the
// commit marker's included, or any other change of the disk) and checks: the output directory shows no sstable unless the run
// finished; the killed run's staging directory is inside the output
// directory and nothing is left beside it; the next run repairs what was
// left (removes an unfinished staging directory, completes a decided
// commit) and says so; after it the output holds exactly the sstable an
// uninterrupted run writes, byte for byte; the source never changes. Half
// the trials write into a directory that does not exist yet.
func TestCrashAnywhere(t *testing.T) {
	crashAnywhere(t, "nc", "legacy_nc_clust", format.MustVersion("oa"), 60)
}

// The same for conversions that write or read trie indexes (Partitions.db
// and Rows.db streamed beside Data.db, or Index.db from a da source).
func TestCrashAnywhereBTI(t *testing.T) {
	da, err := format.ParseFormatVersion(format.BTI, "da")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("nc->da", func(t *testing.T) { crashAnywhere(t, "nc", "legacy_nc_clust", da, 24) })
	t.Run("da->oa", func(t *testing.T) { crashAnywhere(t, "da", "legacy_da_clust", format.MustVersion("oa"), 24) })
}

func crashAnywhere(t *testing.T, group, name string, to format.Version, trials int) {
	srcDir := fixtures.Table(t, group, name)
	src := dataPath(t, srcDir)
	crashAnywhereIn(t, srcDir, trials,
		func(fsys vfs.FS, out string, verify bool) (*Result, error) {
			return convertOn(fsys, src, out, Options{To: to, Verify: verify})
		})
}

// crashAnywhereIn kills run (writing into out through fsys) at random
// points: see TestCrashAnywhere. srcDir must not change.
func crashAnywhereIn(t *testing.T, srcDir string, trials int, run func(fsys vfs.FS, out string, verify bool) (*Result, error)) {
	before := hashDir(t, srcDir)

	// The total a full conversion writes bounds the crash points; its
	// files are what every repaired output must hold.
	fullDir := filepath.Join(t.TempDir(), "full")
	full, err := run(vfs.Default, fullDir, false)
	if err != nil {
		t.Fatal(err)
	}
	want := hashDir(t, fullDir)
	var total int64
	for _, c := range full.Components {
		total += c.After
	}
	rng := rand.New(rand.NewPCG(1, 2))
	complete, completedByRecovery, removedByRecovery := 0, 0, 0
	for i := 0; i < trials; i++ {
		root := t.TempDir()
		parent := filepath.Join(root, "data", "ks")
		out := filepath.Join(parent, "tbl")
		existing := i%2 == 1
		if existing {
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(out, "unrelated.txt"), []byte("x"), 0o644)
		}
		efs := errorfs.New(vfs.Default)
		var at string
		switch k := rng.IntN(6); {
		case k < 2:
			// The marker and every file are renamed; past them the run finishes.
			n := rng.Int64N(int64(len(full.Components)) + 2)
			efs.CrashAt(n, errorfs.Renames)
			at = fmt.Sprintf("rename %d", n)
		case k < 3:
			// Any change: a directory made, a file created, an fsync...
			n := rng.Int64N(int64(3*len(full.Components)) + 12)
			efs.CrashAt(n, errorfs.Changes)
			at = fmt.Sprintf("change %d", n)
		default:
			n := rng.Int64N(total + 1)
			efs.CrashAfterBytes(n)
			at = fmt.Sprintf("byte %d", n)
		}
		res, err := run(efs, out, i%3 == 0)
		if err != nil && !errors.Is(err, errorfs.ErrCrashed) {
			t.Fatalf("trial %d (crash at %s): unexpected error %v", i, at, err)
		}
		if err != nil != efs.Crashed() {
			t.Fatalf("trial %d (crash at %s): error %v, yet crashed %v", i, at, err, efs.Crashed())
		}
		found, orphans := findReadable(t, i, out)
		if ents, _ := os.ReadDir(parent); len(ents) != 1 {
			t.Fatalf("trial %d: the run left something beside the output directory: %v", i, ents)
		}
		// A kill after the last rename (an fsync of the destination, the
		// staging directory's removal) leaves the whole sstable in place:
		// the commit was done. Any earlier one leaves none visible.
		whole := err != nil && len(found) == 1 && orphans == 0 && sameFiles(hashDir(t, out), want)
		switch {
		case whole:
			t.Logf("trial %d: killed after the commit was done (%s)", i, at)
			if len(stagingDirs(t, out)) > 1 {
				t.Fatalf("trial %d: staging directories in the output: %v", i, stagingDirs(t, out))
			}
		case err != nil && len(found) != 0 && !partitionsWithoutData(found):
			t.Fatalf("trial %d (crash at %s): crashed, yet %v is in the output directory", i, at, found)
		case err != nil && len(stagingDirs(t, out)) != 1:
			t.Fatalf("trial %d: crashed, staging directories in the output: %v", i, stagingDirs(t, out))
		case err == nil:
			if len(found) != 1 || res.Output != found[0] || orphans != 0 {
				t.Fatalf("trial %d: finished but output holds %v and %d without Data.db (result %s)", i, found, orphans, res.Output)
			}
			if d := stagingDirs(t, out); len(d) != 0 {
				t.Fatalf("trial %d: finished but left %v", i, d)
			}
			complete++
		}

		// The rerun: it repairs, names what it repaired, and converts
		// when the killed run had not decided its commit.
		res2, err2 := run(vfs.Default, out, false)
		switch {
		case err == nil || whole && !strings.Contains(fmt.Sprint(err2), "completed the commit"):
			if err2 == nil || !strings.Contains(err2.Error(), "already holds") || res2 != nil && len(res2.Recovered) > 0 {
				t.Fatalf("trial %d: rerun over a finished output: %v", i, err2)
			}
		case err2 == nil:
			if len(res2.Recovered) != 1 || !strings.Contains(res2.Recovered[0], "removed") || !strings.Contains(res2.Recovered[0], writer.StagingPrefix) {
				t.Fatalf("trial %d: rerun did not report the leftover it removed: %v", i, res2.Recovered)
			}
			removedByRecovery++
		default:
			if !strings.Contains(err2.Error(), "already holds") || !strings.Contains(err2.Error(), "completed the commit") {
				t.Fatalf("trial %d: rerun after a crash: %v", i, err2)
			}
			completedByRecovery++
		}
		if d := stagingDirs(t, out); len(d) != 0 {
			t.Fatalf("trial %d: after the rerun, %v is left", i, d)
		}
		got := hashDir(t, out)
		delete(got, "unrelated.txt")
		if len(got) != len(want) {
			t.Fatalf("trial %d: output holds %d files, a full run writes %d", i, len(got), len(want))
		}
		for name, h := range want {
			if got[name] != h {
				t.Fatalf("trial %d: %s differs from an uninterrupted run's", i, name)
			}
		}
		found, _ = format.FindSSTables([]string{out}, false)
		if len(found) != 1 {
			t.Fatalf("trial %d: output holds %v", i, found)
		}
		if rep := verify.SSTable(found[0], sstable.Options{}, nil); !rep.OK() {
			t.Fatalf("trial %d: output does not verify: %v", i, rep.Problems)
		}
	}
	if after := hashDir(t, srcDir); len(after) != len(before) {
		t.Fatal("source directory changed")
	} else {
		for k, v := range before {
			if after[k] != v {
				t.Fatalf("source %s changed", k)
			}
		}
	}
	if completedByRecovery == 0 || removedByRecovery == 0 {
		t.Fatalf("trials exercised too little: %d completed by the rerun, %d removed", completedByRecovery, removedByRecovery)
	}
	t.Logf("%d of %d trials finished; the rerun completed %d decided commits and removed %d unfinished stagings",
		complete, trials, completedByRecovery, removedByRecovery)
}

// sameFiles reports whether got holds the files of want, byte for byte,
// and no other sstable's (the unrelated file of half the trials apart).
func sameFiles(got, want map[string][32]byte) bool {
	delete(got, "unrelated.txt")
	if len(got) != len(want) {
		return false
	}
	for name, h := range want {
		if got[name] != h {
			return false
		}
	}
	return true
}

// findReadable is the sstables a scan of dir finds, and how many it
// reports as missing Data.db: a run killed between its renames leaves
// components without Data.db, which the scan names as such (never as an
// sstable to read); any other error fails the test.
func findReadable(t *testing.T, trial int, dir string) (found []string, orphans int) {
	t.Helper()
	for _, f := range format.Find([]string{dir}, format.FindOptions{}).SSTables {
		var md *format.MissingDataError
		switch {
		case errors.As(f.Err, &md):
			orphans++
		case f.Err != nil:
			t.Fatalf("trial %d: scanning output: %v", trial, f.Err)
		default:
			found = append(found, f.Path)
		}
	}
	return found, orphans
}

// A partial set with no staging directory to finish it (an older
// sstabletool, a hand copy) is refused with the files named and the way
// out.
func TestPartialSetWithoutStagingIsExplained(t *testing.T) {
	src := dataPath(t, fixtures.Table(t, "nc", "legacy_nc_clust"))
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "oa-1-big-Index.db"), []byte("x"), 0o644)
	_, err := Convert(src, out, Options{To: format.MustVersion("oa")})
	if err == nil || !strings.Contains(err.Error(), "oa-1-big-Index.db") || !strings.Contains(err.Error(), "rm "+filepath.Join(out, "oa-1-big-*")) {
		t.Fatalf("partial set: %v", err)
	}
}

// A staging directory whose owner is alive is left alone.
func TestLiveStagingIsLeftAlone(t *testing.T) {
	out := t.TempDir()
	st, err := writer.NewStaging(nil, out, "oa-7-big-")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	src := dataPath(t, fixtures.Table(t, "nc", "legacy_nc_clust"))
	res, err := Convert(src, out, Options{To: format.MustVersion("oa")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recovered) != 0 {
		t.Fatalf("a live staging directory was recovered: %v", res.Recovered)
	}
	if _, err := os.Stat(st.Dir()); err != nil {
		t.Fatalf("the live staging directory is gone: %v", err)
	}
}

// partitionsWithoutData reports whether found is one BTI sstable that
// format.Find reports through Partitions.db while its Data.db is not
// there: a crash between the last two renames of a commit (Partitions.db,
// then Data.db), which no reader opens and the next run completes.
func partitionsWithoutData(found []string) bool {
	if len(found) != 1 {
		return false
	}
	_, err := os.Stat(found[0])
	return errors.Is(err, os.ErrNotExist) && strings.HasSuffix(found[0], "-bti-Data.db")
}
