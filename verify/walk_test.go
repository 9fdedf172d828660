package verify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// walkCases are the ways the parallel walk is held to one walker: several
// workers on segments cut at Index.db's entries, finely; and cuts that are
// no partition start (every segment after the first is refused and walked
// again alone).
var walkCases = []struct {
	name string
	o    sstable.SegmentOptions
}{
	{"index/2", sstable.SegmentOptions{Workers: 2, Size: 1}},
	{"index/3/2KiB", sstable.SegmentOptions{Workers: 3, Size: 2 << 10}},
	{"every-1000/2", sstable.SegmentOptions{Workers: 2, Size: 1, Cuts: func(send func(sstable.Cut) bool) {
		for pos := int64(1000); pos < 1<<40; pos += 1000 {
			if !send(sstable.Cut{Data: pos, Index: pos / 2}) {
				return
			}
		}
	}}},
}

// reportWith verifies path with the walk cut and spread as o says.
func reportWith(t *testing.T, path string, o sstable.SegmentOptions, skim bool) *Report {
	t.Helper()
	saved := segmentOptions
	defer func() { segmentOptions = saved }()
	segmentOptions = o
	if skim {
		return SSTableChecksumsAndStructure(path, sstable.Options{})
	}
	return SSTable(path, sstable.Options{}, nil)
}

func sameReport(t *testing.T, what string, want, got *Report) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Report{})); d != "" {
		t.Errorf("%s: report differs from one walker's (-want +got):\n%s", what, d)
	}
}

func demoTable(t *testing.T, partitions int64, uncompressed bool) string {
	t.Helper()
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = partitions
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "demo"), generate.Options{Version: format.MustVersion("nc"), Uncompressed: uncompressed})
	if err != nil {
		t.Fatal(err)
	}
	return res.DataPath
}

// TestParallelWalkMatchesOne: on every fixture and on generated tables,
// the report of a walk on several goroutines is one walker's.
func TestParallelWalkMatchesOne(t *testing.T) {
	paths := []string{demoTable(t, 80, false), demoTable(t, 80, true)}
	if fixtures.Root() != "" {
		paths = append(paths, fixtures.DataFiles(t)...)
	}
	for _, p := range paths {
		for _, skim := range []bool{false, true} {
			want := reportWith(t, p, sstable.SegmentOptions{Workers: 1}, skim)
			for _, c := range walkCases {
				sameReport(t, p+" "+c.name, want, reportWith(t, p, c.o, skim))
			}
		}
	}
}

// TestParallelWalkMatchesOneOnDamage: the same on damaged copies: bytes of
// Data.db (uncompressed, its CRC.db resealed, so the damage reaches the
// decoder), of Index.db, Summary.db and Filter.db changed, and Index.db
// cut short.
func TestParallelWalkMatchesOneOnDamage(t *testing.T) {
	src := demoTable(t, 60, true)
	dir := filepath.Dir(src)
	base := strings.TrimSuffix(filepath.Base(src), "Data.db")
	steps := 23
	if testing.Short() {
		steps = 7
	}
	problems := 0
	for _, comp := range []string{"Data.db", "Index.db", "Summary.db", "Filter.db", "Index.db/cut"} {
		name := strings.TrimSuffix(comp, "/cut")
		clean, err := os.ReadFile(filepath.Join(dir, base+name))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < steps; i++ {
			at := len(clean) * i / steps
			b := append([]byte(nil), clean...)
			if strings.HasSuffix(comp, "/cut") {
				b = b[:at]
			} else {
				b[at] ^= 0x5A
			}
			cp := fixtures.CopyTable(t, dir)
			path := filepath.Join(cp, base+"Data.db")
			if err := os.WriteFile(filepath.Join(cp, base+name), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if name == "Data.db" {
				fixtures.ResealCRC(t, path)
				fixtures.RewriteDigest(t, path)
			}
			want := reportWith(t, path, sstable.SegmentOptions{Workers: 1}, false)
			problems += len(want.Problems)
			for _, c := range walkCases {
				sameReport(t, comp+" damaged at "+strconv.Itoa(at)+" "+c.name, want, reportWith(t, path, c.o, false))
			}
			// A segment with more problems than it may carry is walked
			// again alone.
			maxSegmentProblems = 0
			sameReport(t, comp+" damaged at "+strconv.Itoa(at)+" overflowing", want, reportWith(t, path, walkCases[0].o, false))
			maxSegmentProblems = 1000
		}
	}
	// A partition key changed in Data.db: out of order, and not Index.db's.
	clean, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(src, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var starts []int64
	s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		starts = append(starts, p.Offset)
		return nil
	})
	s.Close()
	orderProblems := 0
	for i := 1; i < len(starts); i += max(1, len(starts)/steps) {
		b := append([]byte(nil), clean...)
		b[starts[i]+2] ^= 0x01 // the key's first byte
		cp := fixtures.CopyTable(t, dir)
		path := filepath.Join(cp, base+"Data.db")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.ResealCRC(t, path)
		fixtures.RewriteDigest(t, path)
		want := reportWith(t, path, sstable.SegmentOptions{Workers: 1}, false)
		for _, p := range want.Problems {
			if strings.Contains(p.Message, "is not after the previous key") {
				orderProblems++
			}
		}
		for _, c := range walkCases {
			sameReport(t, "key of partition "+strconv.Itoa(i)+" changed "+c.name, want, reportWith(t, path, c.o, false))
		}
	}
	if problems == 0 || orderProblems == 0 {
		t.Errorf("%d problems, %d of key order: the test tests too little", problems, orderProblems)
	}
}
