package export

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	pq "github.com/parquet-go/parquet-go"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// pageRecord is a record of the file TestPagesReadBack writes, as
// parquet-go reads it.
type pageRecord struct {
	Text   *string          `parquet:"text,optional"`
	Plain  []byte           `parquet:"plain,optional"`
	Int    *int64           `parquet:"int,optional"`
	Small  int32            `parquet:"small"`
	Float  *float64         `parquet:"float,optional"`
	Flag   *bool            `parquet:"flag,optional"`
	List   []*string        `parquet:"list,list"`
	Word   *string          `parquet:"word,optional"`
	Sizes  map[string]int64 `parquet:"sizes"`
	Shared *string          `parquet:"shared,optional"`
}

// TestPagesReadBack writes records of every column kind the export uses
// through its own page encodings, with what stresses them (lengths from 0
// to thousands in any order, so that the length deltas need every bit
// width and go negative; nulls in runs and alone; a dictionary of 70,000
// words, 17-bit indices; runs of a shared value; pages and row groups
// cut small), and holds what parquet-go, a reader independent of the
// writer, reads back to what was written.
func TestPagesReadBack(t *testing.T) {
	defer func(l groupLimits) { rowGroupLimits = l }(rowGroupLimits)
	rowGroupLimits = groupLimits{records: batchRows + 100, bytes: rowGroupBytes, dictBytes: sharedDictBytes}
	specs := []spec{
		{name: "text", typ: tString, optional: true, deltaLength: true},
		{name: "plain", typ: tBinary, optional: true},
		{name: "int", typ: tInt64, optional: true, stats: true},
		{name: "small", typ: tInt32},
		{name: "float", typ: tDouble, optional: true},
		{name: "flag", typ: tBool, optional: true},
		{name: "list", typ: tStringList},
		{name: "word", typ: tString, optional: true, dict: true},
		{name: "sizes", typ: tSizeMap},
		{name: "shared", typ: tString, optional: true, stats: true, shared: true},
	}
	var words [][]byte
	for i := range 70000 {
		words = append(words, fmt.Appendf(nil, "w%d", i))
	}
	path := filepath.Join(t.TempDir(), "pages.parquet")
	file, err := createParquet(vfs.Default, path, specs, map[int][][]byte{7: words}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pf := file.main
	rng := rand.New(rand.NewPCG(1, 2))
	str := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(rng.IntN(26))
		}
		return b
	}
	// nullRun: a null now and then, and runs of them.
	nullRun := 0
	nulls := func() bool {
		if nullRun > 0 {
			nullRun--
			return true
		}
		switch rng.IntN(20) {
		case 0:
			nullRun = rng.IntN(40)
			return true
		case 1, 2:
			return true
		}
		return false
	}
	var want []pageRecord
	var shared []byte
	const records = 5*batchRows + 77
	for r := range records {
		c := pf.cols
		var rec pageRecord
		if nulls() {
			c[0].null()
		} else {
			n := []int{0, 1, 3, 200, 3000}[rng.IntN(5)] + rng.IntN(3)
			b := str(n)
			pf.bytes(c[0], b)
			rec.Text = ptr(string(b))
		}
		if nulls() {
			c[1].null()
		} else {
			b := str(1 + rng.IntN(30)) // never empty: nil is null
			pf.bytes(c[1], b)
			rec.Plain = b
		}
		if nulls() {
			c[2].null()
		} else {
			v := rng.Int64() >> rng.IntN(64)
			if rng.IntN(2) == 0 {
				v = -v
			}
			c[2].int64(v)
			rec.Int = &v
		}
		rec.Small = int32(rng.Uint32())
		c[3].int32(rec.Small)
		if nulls() {
			c[4].null()
		} else {
			v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)))
			c[4].double(v)
			rec.Float = &v
		}
		if nulls() {
			c[5].null()
		} else {
			v := rng.IntN(3) == 0
			c[5].bool(v)
			rec.Flag = &v
		}
		var elems []span
		for range rng.IntN(4) {
			if rng.IntN(5) == 0 {
				elems = append(elems, nullSpan)
				rec.List = append(rec.List, nil)
				continue
			}
			b := str(rng.IntN(12))
			start := len(pf.arena)
			pf.arena = append(pf.arena, b...)
			elems = append(elems, spanOf(start, len(pf.arena)))
			rec.List = append(rec.List, ptr(string(b)))
		}
		c[6].list(elems)
		if nulls() {
			c[7].null()
		} else {
			i := rng.IntN(len(words))
			c[7].word(int32(i))
			rec.Word = ptr(string(words[i]))
		}
		var names [][]byte
		var sizes []int64
		rec.Sizes = map[string]int64{}
		for k := range rng.IntN(3) {
			names = append(names, fmt.Appendf(nil, "c%d", k))
			sizes = append(sizes, rng.Int64N(1<<40))
			rec.Sizes[string(names[k])] = sizes[k]
		}
		c[8].sizes(names, sizes)
		// A shared column starts a run at a batch's first record and
		// wherever its value changes.
		if r == 0 || rng.IntN(30) == 0 {
			shared = nil
			if rng.IntN(4) != 0 {
				shared = str(1 + rng.IntN(40))
			}
			if shared == nil {
				c[9].shareNull(pf.cur.n)
			} else {
				c[9].shareBytes(pf.cur.n, shared)
			}
		} else if pf.cur.n == 0 {
			if shared == nil {
				c[9].shareNull(0)
			} else {
				c[9].shareBytes(0, shared)
			}
		}
		if shared != nil {
			rec.Shared = ptr(string(shared))
		}
		want = append(want, rec)
		if _, err := pf.endRecord(); err != nil {
			t.Fatal(err)
		}
	}
	if err := file.commit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if g := len(f.RowGroups()); g < 3 {
		t.Errorf("%d row groups, want several", g)
	}
	rd := pq.NewGenericReader[pageRecord](bytes.NewReader(b))
	defer rd.Close()
	got := make([]pageRecord, rd.NumRows())
	n, err := rd.Read(got)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got[:n], cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("read back (-written +read):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// TestRunEnd holds runEnd, which compares 8 bytes at a time, to a
// value-by-value scan, on runs of every length up to far past the word
// at a time, for both level widths.
func TestRunEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var v16 []int16
	var v32 []int32
	for len(v16) < 200000 {
		n := 1 + rng.IntN(70)
		if rng.IntN(10) == 0 {
			n = rng.IntN(5000)
		}
		x := int32(rng.IntN(3))
		if rng.IntN(4) == 0 {
			x = rng.Int32() - 1<<30
		}
		for range n {
			v16, v32 = append(v16, int16(x)), append(v32, x)
		}
	}
	naive := func(n int, eq func(j int) bool, i int) int {
		j := i + 1
		for j < n && eq(j) {
			j++
		}
		return j
	}
	for i := 0; i < len(v16); i += 1 + rng.IntN(7) {
		if got, want := runEnd(v16, i), naive(len(v16), func(j int) bool { return v16[j] == v16[i] }, i); got != want {
			t.Fatalf("int16 run at %d: ends at %d, want %d", i, got, want)
		}
		if got, want := runEnd(v32, i), naive(len(v32), func(j int) bool { return v32[j] == v32[i] }, i); got != want {
			t.Fatalf("int32 run at %d: ends at %d, want %d", i, got, want)
		}
	}
}
