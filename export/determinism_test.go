package export

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sstabletool/sstabletool/format/sstable"
)

// TestSameBytesWhateverTheCores: the same export writes the same bytes,
// on one core or several (the records are filled by segments of Data.db
// on every core, and the columns written concurrently, each through the
// batches at its own pace, in whatever order the cores take them) and
// run after run (the file's key-value metadata comes from a map); in row
// groups ended by any of their bounds, which hold the same records as one
// row group does.
func TestSameBytesWhateverTheCores(t *testing.T) {
	s := demoTable(t, 250) // enough batches for several row groups of each bound below
	// Segments of 64 KiB: dozens of them, most ending inside a batch.
	defer func(n int64) { segmentBytes = n }(segmentBytes)
	segmentBytes = 64 << 10
	export := func(procs int, limits groupLimits) (paths []string, files [][]byte) {
		defer func(l groupLimits) { rowGroupLimits = l }(rowGroupLimits)
		rowGroupLimits = limits
		for _, p := range exportOn(t, s, procs) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			paths, files = append(paths, p), append(files, b)
		}
		return paths, files
	}
	onePaths, _ := export(1, rowGroupLimits)
	for _, c := range []struct {
		name   string
		limits groupLimits
	}{
		{"default bounds", rowGroupLimits},
		// Each bound ending the row groups in turn.
		{"records", groupLimits{records: batchRows + 100, bytes: rowGroupBytes, dictBytes: sharedDictBytes}},
		{"bytes", groupLimits{records: rowGroupRecords, bytes: 100 << 10, dictBytes: sharedDictBytes}},
		{"dictionary", groupLimits{records: rowGroupRecords, bytes: rowGroupBytes, dictBytes: 1 << 10}},
	} {
		paths, want := export(1, c.limits)
		_, got := export(4, c.limits)
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: on 4 cores, %s differs from the export on one (%d and %d bytes)", c.name, paths[i], len(got[i]), len(want[i]))
			}
		}
		cells := paths[1]
		groups := rowGroups(t, cells)
		if c.limits != rowGroupLimits && groups < 3 {
			t.Errorf("%s: %d row groups, want several", c.name, groups)
		}
		x, y := parquetRowsOf(t, onePaths[1]), parquetRowsOf(t, cells)
		if len(x) != len(y) {
			t.Fatalf("%s: %d records, %d in one row group", c.name, len(y), len(x))
		}
		for j := range x {
			if !x[j].Equal(y[j]) {
				t.Fatalf("%s: record %d: %v, %v in one row group", c.name, j, y[j], x[j])
			}
		}
	}
}

// TestSegmentsCutAnywhere: where Index.db's positions are not partition
// starts (an Index.db that lies), the walk by segments gives up what does
// not follow and goes on on one goroutine: the files hold the records of
// the walk on one core, each once, in order (their batches, hence pages,
// may be cut elsewhere).
func TestSegmentsCutAnywhere(t *testing.T) {
	s := demoTable(t, 250)
	defer func(n int64) { segmentBytes = n }(segmentBytes)
	segmentBytes = 64 << 10
	defer func(c func(func(sstable.Cut) bool)) { segmentCuts = c }(segmentCuts)
	want := exportOn(t, s, 1)
	for _, every := range []int64{100 << 10, 37 << 10} {
		segmentCuts = func(send func(sstable.Cut) bool) {
			for pos := every; pos < s.Data().Length(); pos += every {
				if !send(sstable.Cut{Data: pos, Index: -1}) {
					return
				}
			}
		}
		got := exportOn(t, s, 4)
		if len(got) != len(want) {
			t.Fatalf("cuts every %d bytes: %d files, want %d", every, len(got), len(want))
		}
		for i := range want {
			x, y := parquetRowsOf(t, want[i]), parquetRowsOf(t, got[i])
			if len(x) != len(y) {
				t.Fatalf("cuts every %d bytes: %s has %d records, %d on one core", every, got[i], len(y), len(x))
			}
			for j := range x {
				if !x[j].Equal(y[j]) {
					t.Fatalf("cuts every %d bytes: %s record %d: %v, %v on one core", every, got[i], j, y[j], x[j])
				}
			}
		}
	}
}

// exportOn exports s's partitions and cells on procs cores and returns
// the two files' paths.
func exportOn(t *testing.T, s *sstable.SSTable, procs int) []string {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	e, err := New(t.TempDir(), Options{Node: "n", Datasets: Partitions | Cells, Now: 1700000000})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := e.SSTable(s, Names{Keyspace: "ks", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 {
		t.Fatalf("%d files, want partitions and cells", len(fs))
	}
	var paths []string
	for _, f := range fs {
		paths = append(paths, f.Path)
	}
	return paths
}

func rowGroups(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return len(f.RowGroups())
}
