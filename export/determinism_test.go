package export

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// TestSameBytesWhateverTheCores: the same export writes the same bytes,
// on one core or several (the columns are written concurrently, each
// through the batches at its own pace, in whatever order the cores take
// them) and run after run (the file's key-value metadata comes from a
// map); in row groups ended by any of their bounds, which hold the same
// records as one row group does.
func TestSameBytesWhateverTheCores(t *testing.T) {
	s := demoTable(t, 250) // enough batches for several row groups of each bound below
	export := func(procs int, limits groupLimits) (paths []string, files [][]byte) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		defer func(l groupLimits) { rowGroupLimits = l }(rowGroupLimits)
		rowGroupLimits = limits
		e, err := New(t.TempDir(), Options{Node: "n", Datasets: Partitions | Cells, Now: 1700000000})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := e.SSTable(s, Names{"ks", "t"})
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 2 {
			t.Fatalf("%d files, want partitions and cells", len(fs))
		}
		for _, f := range fs {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			paths, files = append(paths, f.Path), append(files, b)
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
