package scrub

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

var crashTrials = flag.Int("crash.trials", 0, "crash trials per kind in the scrub crash tests (0: a few seconds' worth)")

func hashFiles(t testing.TB, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for name, b := range readAll(t, dir) {
		out[name] = sha256.Sum256(b)
	}
	return out
}

// crashSources are the two ways scrub writes: a rewrite into two sstables
// (duplicate and out-of-order rows: both are committed at once) and a
// rebuild of a fixture's deleted derived components.
func crashSources(t *testing.T) []string {
	ts := stats.TimestampEpoch + 1000
	rewrite := writeTable(t, map[int32][]testRow{
		1: {{1, ts, "a"}, {3, ts, "c"}, {2, ts, "b"}},
		2: {{1, ts, "a"}, {1, ts + 1, "a2"}, {2, ts, "b"}},
	}, true)
	stripped := fixtures.CopyTable(t, fixtures.Table(t, "oa", "legacy_oa_clust"))
	for _, c := range []string{format.ComponentIndex, format.ComponentSummary, format.ComponentFilter, format.ComponentTOC} {
		os.Remove(filepath.Join(stripped, "oa-1-big-"+c))
	}
	return []string{rewrite, filepath.Join(stripped, "oa-1-big-Data.db")}
}

// TestCrashAnywhere kills scrub --out at random points through the FS seam
// (a byte count, a rename, any other change): the output directory never
// shows an sstable that is not whole (an sstable is visible by its Data.db,
// renamed last), the source never changes, and the next run completes the
// output to exactly what an uninterrupted run writes.
func TestCrashAnywhere(t *testing.T) {
	trials := 16
	if *crashTrials > 0 {
		trials = *crashTrials
	}
	for _, src := range crashSources(t) {
		t.Run(filepath.Base(filepath.Dir(src)), func(t *testing.T) {
			srcBefore := hashFiles(t, filepath.Dir(src))
			fullDir := filepath.Join(t.TempDir(), "full")
			full, err := Scrub(src, fullDir, Options{ColumnIndexSize: fixtureColumnIndexSize})
			if err != nil {
				t.Fatal(err)
			}
			want := hashFiles(t, fullDir)
			var total int64
			for _, b := range readAll(t, fullDir) {
				total += int64(len(b))
			}
			rng := rand.New(rand.NewPCG(5, 6))
			completed := 0
			for i := range trials {
				out := filepath.Join(fastTemp(t), "out")
				efs := errorfs.New(vfs.Default)
				var at string
				switch k := rng.IntN(3); k {
				case 0:
					n := rng.Int64N(int64(len(want)) + 2)
					efs.CrashAt(n, errorfs.Renames)
					at = fmt.Sprintf("rename %d", n)
				case 1:
					n := rng.Int64N(int64(3*len(want)) + 10)
					efs.CrashAt(n, errorfs.Changes)
					at = fmt.Sprintf("change %d", n)
				default:
					n := rng.Int64N(total + 1)
					efs.CrashAfterBytes(n)
					at = fmt.Sprintf("byte %d", n)
				}
				_, err := scrubOn(efs, src, out, Options{ColumnIndexSize: fixtureColumnIndexSize})
				if err != nil && !errors.Is(err, errorfs.ErrCrashed) {
					t.Fatalf("trial %d (%s): %v", i, at, err)
				}
				for _, f := range format.Find([]string{out}, format.FindOptions{}).SSTables {
					if f.Err != nil {
						var md *format.MissingDataError
						if !errors.As(f.Err, &md) {
							t.Fatalf("trial %d (%s): %v", i, at, f.Err)
						}
						continue
					}
					// A visible sstable is one of the uninterrupted run's,
					// whole.
					d, _, _ := format.ParseDescriptor(f.Path)
					got := hashFiles(t, out)
					for name, h := range want {
						if strings.HasPrefix(name, d.Prefix()) && got[name] != h {
							t.Fatalf("trial %d (%s): %s is visible but %s is not the full run's", i, at, f.Path, name)
						}
					}
				}
				// The rerun completes it.
				_, err2 := Scrub(src, out, Options{ColumnIndexSize: fixtureColumnIndexSize})
				if err2 != nil && !strings.Contains(err2.Error(), "already holds") {
					t.Fatalf("trial %d (%s): rerun: %v", i, at, err2)
				}
				if err2 != nil {
					completed++
				}
				got := hashFiles(t, out)
				if !maps2Equal(got, want) {
					t.Fatalf("trial %d (%s): after the rerun the output holds %v, an uninterrupted run %v", i, at, keys(got), keys(want))
				}
				if ents, _ := os.ReadDir(out); len(ents) != len(want) {
					t.Fatalf("trial %d (%s): %d entries left in the output", i, at, len(ents))
				}
			}
			if !maps2Equal(hashFiles(t, filepath.Dir(src)), srcBefore) {
				t.Fatal("the source changed")
			}
			t.Logf("%d trials (%d outputs, %d bytes); %d were committed before the kill and completed by the rerun's recovery", trials, len(full.Outputs), total, completed)
		})
	}
}

func maps2Equal(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keys(m map[string][32]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// node is a data directory with one table directory holding one sstable
// that needs a rewrite into two (duplicate and out-of-order rows).
type node struct {
	data, table string
	want        map[int32]map[int32]testRow // what the table reads as, before and after
}

func newNode(t *testing.T) *node {
	ts := stats.TimestampEpoch + 1000
	src := writeTable(t, map[int32][]testRow{
		1: {{1, ts, "a"}, {3, ts, "c"}, {2, ts, "b"}},
		2: {{1, ts, "a"}, {1, ts + 1, "a2"}, {2, ts, "b"}},
		3: {{5, ts, "e"}},
	}, true)
	table := filepath.Dir(src)
	n := &node{data: filepath.Dir(filepath.Dir(table)), table: table}
	n.want = map[int32]map[int32]testRow{
		1: {1: {1, ts, "a"}, 2: {2, ts, "b"}, 3: {3, ts, "c"}},
		2: {1: {1, ts + 1, "a2"}, 2: {2, ts, "b"}},
		3: {5: {5, ts, "e"}},
	}
	return n
}

// live lists the live sstables of the table directory (snapshots aside).
func (n *node) live(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, f := range format.Find([]string{n.table}, format.FindOptions{}).SSTables {
		if f.Err != nil {
			t.Fatalf("%s: %v", f.Path, f.Err)
		}
		out = append(out, f.Path)
	}
	return out
}

// check says whether the table reads as it should: the original sstable
// alone, or (scrubbed) the two sstables scrub writes, whose rows read
// together are the reconciled table.
func (n *node) check(t *testing.T, scrubbed bool) error {
	live := n.live(t)
	switch {
	case !scrubbed && len(live) == 1 && strings.Contains(live[0], "-1-big-"):
		return nil
	case len(live) == 2:
		got := tableRows(t, live...)
		for k, rs := range n.want {
			for c, r := range rs {
				if got[k][c] != r {
					return fmt.Errorf("partition %d row %d reads %+v, want %+v", k, c, got[k][c], r)
				}
			}
		}
		for _, p := range live {
			mustVerify(t, p)
		}
		return nil
	}
	return fmt.Errorf("live sstables %v", live)
}

// afterCrash checks a table directory a killed in-place scrub left, both
// ways out: Cassandra's startup cleanup leaves one copy (the original or
// the scrubbed pair); the next run finishes or rolls back and scrubs.
func (n *node) afterCrash(t *testing.T, trial string) {
	saved := n.data + ".saved"
	if out, err := exec.Command("cp", "-a", n.data, saved).CombinedOutput(); err != nil {
		t.Fatalf("%s: cp: %v %s", trial, err, out)
	}
	if _, err := txnlog.RemoveUnfinishedLeftovers(vfs.Default, n.table); err != nil {
		t.Fatalf("%s: Cassandra would refuse to start: %v", trial, err)
	}
	if f := format.Find([]string{n.table}, format.FindOptions{}).SSTables; len(f) > 0 && f[len(f)-1].Err != nil {
		ents, _ := os.ReadDir(n.table)
		t.Fatalf("%s: after Cassandra's startup cleanup: %v; %v", trial, f[len(f)-1].Err, ents)
	}
	if err := n.check(t, true); err != nil {
		if err2 := n.check(t, false); err2 != nil {
			t.Fatalf("%s: after Cassandra's startup cleanup: %v", trial, err)
		}
	}
	os.RemoveAll(n.data)
	if err := os.Rename(saved, n.data); err != nil {
		t.Fatal(err)
	}
	rep, err := InPlace([]string{n.data}, InPlaceOptions{Force: true, Jobs: 1})
	if err != nil || len(rep.Failed) != 0 {
		t.Fatalf("%s: rerun: %v %+v", trial, err, rep.Failed)
	}
	if err := n.check(t, true); err != nil {
		t.Fatalf("%s: after the rerun: %v", trial, err)
	}
	if logs, _ := txnlog.FindLogs(n.table); len(logs) != 0 {
		t.Fatalf("%s: after the rerun, %s is left", trial, logs[0].Name)
	}
}

// TestCrashInPlace stops an in-place scrub (through the FS seam, as a
// kill would) before each change it makes: the snapshot's links, the log
// records, each file created, fsynced, the old files unlinked; and at
// random byte counts. Both ways out end with one copy of the table.
func TestCrashInPlace(t *testing.T) {
	var ops []string
	n := newNode(t)
	efs := errorfs.New(vfs.Default).Trace(func(op errorfs.Op) {
		if errorfs.Changes(op) {
			ops = append(ops, op.Kind.String()+" "+filepath.Base(op.Path))
		}
	})
	rep, err := inPlaceOn(efs, []string{n.data}, InPlaceOptions{Force: true, Jobs: 1})
	if err != nil || len(rep.SSTables) != 1 || len(rep.SSTables[0].Outputs) != 2 || rep.Snapshot == "" {
		t.Fatalf("a full run: %v %+v", err, rep)
	}
	if err := n.check(t, true); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(n.table, format.SnapshotsDir, rep.Snapshot, "oa-1-big-Data.db")
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no pre-scrub snapshot: %v", err)
	}
	// A second run finds nothing to do.
	again, err := InPlace([]string{n.data}, InPlaceOptions{Force: true, Jobs: 1})
	if err != nil || again.Repaired() || again.Snapshot != "" {
		t.Fatalf("a second run: %v repaired %v snapshot %q", err, again.Repaired(), again.Snapshot)
	}
	var bytes int64
	for _, b := range readAll(t, n.table) {
		bytes += int64(len(b))
	}
	t.Logf("a full run makes %d changes: %v", len(ops), ops)
	points := []int64{}
	for k := range len(ops) + 1 {
		points = append(points, int64(k))
	}
	for _, k := range points {
		n := newNode(t)
		efs := errorfs.New(vfs.Default).CrashAt(k, errorfs.Changes)
		inPlaceOn(efs, []string{n.data}, InPlaceOptions{Force: true, Jobs: 1})
		what := "the end"
		if int(k) < len(ops) {
			what = ops[k]
		}
		n.afterCrash(t, fmt.Sprintf("crash before change %d (%s)", k, what))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	byteTrials := 6
	if *crashTrials > 0 {
		byteTrials = *crashTrials
	}
	for range byteTrials {
		n := newNode(t)
		at := rng.Int64N(bytes + 1)
		inPlaceOn(errorfs.New(vfs.Default).CrashAfterBytes(at), []string{n.data}, InPlaceOptions{Force: true, Jobs: 1})
		n.afterCrash(t, fmt.Sprintf("crash at byte %d", at))
	}
}

// TestKilledScrub SIGKILLs a real scrub process (out of place, and in
// place) at random instants; after each, the output shows no partial
// sstable, and the next run completes.
func TestKilledScrub(t *testing.T) {
	trials := 6
	if *crashTrials > 0 {
		trials = *crashTrials
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, mode := range []string{"out", "in-place"} {
		t.Run(mode, func(t *testing.T) {
			n := newNode(t)
			out := filepath.Join(t.TempDir(), "out")
			full := runChild(t, mode, n, out, -1)
			for range 2 { // the first run pays for cold caches
				n := newNode(t)
				full = min(full, runChild(t, mode, n, filepath.Join(fastTemp(t), "out"), -1))
			}
			var wantOut map[string][32]byte
			if mode == "out" {
				wantOut = hashFiles(t, out)
			}
			killed := 0
			for i := range trials {
				n := newNode(t)
				out := filepath.Join(fastTemp(t), "out")
				// The measured run includes the process's exit: kill within
				// the first two thirds to land mostly inside the work.
				after := time.Duration(rng.Int64N(int64(full)*2/3 + 1))
				if runChild(t, mode, n, out, after) < 0 {
					killed++
				}
				trial := fmt.Sprintf("kill -9 after %v (a whole run takes %v), trial %d", after, full, i)
				if mode == "in-place" {
					n.afterCrash(t, trial)
					continue
				}
				if _, err := os.Stat(out); err == nil {
					for _, f := range format.Find([]string{out}, format.FindOptions{}).SSTables {
						var md *format.MissingDataError
						if f.Err != nil && !errors.As(f.Err, &md) {
							t.Fatalf("%s: %v", trial, f.Err)
						}
					}
				}
				src := n.live(t)[0]
				rep, err := Scrub(src, out, Options{})
				if err != nil && !strings.Contains(err.Error(), "already holds") {
					t.Fatalf("%s: rerun: %v", trial, err)
				}
				if err == nil && len(rep.Outputs) != 2 {
					t.Fatalf("%s: rerun wrote %v: %+v", trial, rep.Outputs, rep)
				}
				if !maps2Equal(hashFiles(t, out), wantOut) {
					t.Fatalf("%s: after the rerun the output differs from an uninterrupted run's", trial)
				}
			}
			t.Logf("%d kills, %d before the run ended; a whole run takes %v", trials, killed, full)
		})
	}
}

// runChild runs scrub in a child process and kills it after the delay
// (counted from when it says it started; < 0: let it finish). It returns
// how long the run took, or -1 when it was killed before it ended.
func runChild(t *testing.T, mode string, n *node, out string, after time.Duration) time.Duration {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperScrubProcess$")
	cmd.Env = append(os.Environ(), "SCRUB_HELPER_MODE="+mode, "SCRUB_HELPER_DATA="+n.data, "SCRUB_HELPER_OUT="+out)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); err != nil || line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	start := time.Now()
	if after >= 0 {
		time.Sleep(after)
		cmd.Process.Kill()
	}
	rest, _ := r.ReadString(0)
	err = cmd.Wait()
	took := time.Since(start)
	if !strings.Contains(rest, "done") {
		if after < 0 {
			t.Fatalf("child: %v\n%s", err, rest)
		}
		return -1
	}
	return took
}

// TestHelperScrubProcess is the child of TestKilledScrub.
func TestHelperScrubProcess(t *testing.T) {
	mode := os.Getenv("SCRUB_HELPER_MODE")
	if mode == "" {
		t.Skip("the child process of TestKilledScrub")
	}
	data, out := os.Getenv("SCRUB_HELPER_DATA"), os.Getenv("SCRUB_HELPER_OUT")
	fmt.Println("started")
	var err error
	if mode == "in-place" {
		var rep *NodeReport
		rep, err = InPlace([]string{data}, InPlaceOptions{Force: true, Jobs: 1})
		if err == nil && len(rep.Failed) > 0 {
			err = fmt.Errorf("%+v", rep.Failed)
		}
	} else {
		var found []string
		for _, f := range format.Find([]string{data}, format.FindOptions{Recursive: true}).SSTables {
			found = append(found, f.Path)
		}
		_, err = Scrub(found[0], out, Options{})
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("done")
}

// A failed fsync or a full disk stops the scrub with an error, leaves no
// sstable visible and nothing in the way of the next run.
func TestDiskFaults(t *testing.T) {
	for _, src := range crashSources(t) {
		full := filepath.Join(fastTemp(t), "full")
		if _, err := Scrub(src, full, Options{ColumnIndexSize: fixtureColumnIndexSize}); err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, b := range readAll(t, full) {
			total += int64(len(b))
		}
		for i, efs := range []*errorfs.FS{
			errorfs.New(vfs.Default).FailSync(func(p string) bool { return strings.HasSuffix(p, "-Data.db") }),
			errorfs.New(vfs.Default).FailSync(func(string) bool { return true }),
			errorfs.New(vfs.Default).NoSpaceAfterBytes(total / 3),
			errorfs.New(vfs.Default).NoSpaceAfterBytes(total - 10),
		} {
			out := filepath.Join(fastTemp(t), "out")
			if _, err := scrubOn(efs, src, out, Options{ColumnIndexSize: fixtureColumnIndexSize}); err == nil {
				t.Fatalf("%s, fault %d: no error", src, i)
			}
			if f := format.Find([]string{out}, format.FindOptions{}).SSTables; len(f) != 0 && f[0].Err == nil {
				t.Fatalf("%s, fault %d: %v visible", src, i, f)
			}
			if _, err := Scrub(src, out, Options{ColumnIndexSize: fixtureColumnIndexSize}); err != nil {
				t.Fatalf("%s, fault %d: the next run: %v", src, i, err)
			}
			if !maps2Equal(hashFiles(t, out), hashFiles(t, full)) {
				t.Fatalf("%s, fault %d: the next run's output differs from an undisturbed one", src, i)
			}
		}
	}
}
