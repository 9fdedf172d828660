package export

import (
	"bytes"
	"os"
	"runtime"
	"testing"
)

// TestSameBytesWhateverTheCores: the same export writes the same bytes,
// on one core or several (the columns are written concurrently, in
// whatever order the cores take them) and run after run (the file's
// key-value metadata comes from a map).
func TestSameBytesWhateverTheCores(t *testing.T) {
	s := stagingTable(t)
	export := func(procs int) [][]byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		e, err := New(t.TempDir(), Options{Node: "n", Datasets: Partitions | Cells, Now: 1700000000})
		if err != nil {
			t.Fatal(err)
		}
		files, err := e.SSTable(s, Names{"ks", "t"})
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for _, f := range files {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	want := export(1)
	if len(want) != 2 {
		t.Fatalf("%d files, want partitions and cells", len(want))
	}
	for _, procs := range []int{4, 4, 2} {
		got := export(procs)
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("GOMAXPROCS=%d: file %d differs from the export on one core (%d and %d bytes)", procs, i, len(got[i]), len(want[i]))
			}
		}
	}
}
