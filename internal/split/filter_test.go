package split

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/inspect"
)

// keysOf lists an sstable's partition keys in Data.db order.
func keysOf(t testing.TB, path string) (keys [][]byte, p token.Partitioner, text []string) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(ps *sstable.PartitionSummary) error {
		keys = append(keys, slices.Clone(ps.Key))
		text = append(text, inspect.FormatKey(s.KeyType(), ps.Key))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, s.Partitioner(), text
}

func dropKeys(keys ...[]byte) func(*sstable.SSTable) (*Filter, error) {
	return func(*sstable.SSTable) (*Filter, error) {
		sel := &Selection{Keys: map[string]bool{}}
		for _, k := range keys {
			sel.Keys[string(k)] = true
		}
		return &Filter{Drop: sel}, nil
	}
}

// TestFilterDropKey drops the middle partition of every real sstable: it
// is gone, every other partition is the source's (dump lines equal), the
// output verifies, and the report names the partition dropped.
func TestFilterDropKey(t *testing.T) {
	for _, src := range fixtures.DataFiles(t) {
		t.Run(filepath.Base(filepath.Dir(src)), func(t *testing.T) {
			keys, _, text := keysOf(t, src)
			k := len(keys) / 2
			res, err := Write(src, filepath.Join(t.TempDir(), "out"), Options{Filter: dropKeys(keys[k])})
			if err != nil {
				t.Fatal(err)
			}
			want := partitionLines(t, src)
			want = slices.Delete(want, k, k+1)
			if len(keys) == 1 {
				if len(res.Outputs) != 0 || res.Dropped != 1 {
					t.Fatalf("dropping the one partition wrote %+v", res.Outputs)
				}
				return
			}
			if len(res.Outputs) != 1 || !res.Verified {
				t.Fatalf("%d outputs, verified %v", len(res.Outputs), res.Verified)
			}
			mustVerify(t, res.Outputs[0].Data)
			if got := outputLines(t, res); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the output is not the source without partition %s", text[k])
			}
			if res.Dropped != 1 || len(res.DroppedKeys) != 1 || res.DroppedKeys[0].Key != text[k] || res.Partitions != int64(len(keys)-1) ||
				len(res.Named()) != 1 {
				t.Fatalf("report: %d dropped %+v, %d written", res.Dropped, res.DroppedKeys, res.Partitions)
			}
		})
	}
}

// TestFilterSelections: keep by key, keep by token range (with a key
// dropped inside it), a range that wraps around the ring, and a filter
// that drops everything (nothing written).
func TestFilterSelections(t *testing.T) {
	src := filepath.Join(fixtures.Table(t, "me-collections", "ascii_with_special_chars-90f31e40a1c711eeae8c6d2c86545d91"), "me-1-big-Data.db")
	keys, p, _ := keysOf(t, src)
	if len(keys) < 4 {
		t.Fatalf("%d partitions", len(keys))
	}
	lines := partitionLines(t, src)
	tok := func(i int) token.Token { return p.Token(keys[i]) }
	for _, tc := range []struct {
		name   string
		filter Filter
		want   []int // indexes of the partitions written
	}{
		{"keep keys", Filter{Keep: &Selection{Keys: map[string]bool{string(keys[1]): true, string(keys[3]): true}}}, []int{1, 3}},
		{"keep range drop key", Filter{Keep: &Selection{Ranges: []TokenRange{{tok(0), tok(3)}}},
			Drop: &Selection{Keys: map[string]bool{string(keys[2]): true}}}, []int{1, 3}},
		{"wrapping range", Filter{Keep: &Selection{Ranges: []TokenRange{{tok(len(keys) - 2), tok(0)}}}}, []int{0, len(keys) - 1}},
		{"drop everything", Filter{Drop: &Selection{Ranges: []TokenRange{{tok(0), tok(0)}}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.filter
			res, err := Write(src, filepath.Join(t.TempDir(), "out"), Options{Filter: func(*sstable.SSTable) (*Filter, error) { return &f, nil }})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, i := range tc.want {
				want = append(want, lines[i])
			}
			if got := outputLines(t, res); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("wrote %d partitions, want %v", len(got), tc.want)
			}
			if res.Dropped != int64(len(keys)-len(tc.want)) || (len(tc.want) == 0) != (len(res.Outputs) == 0) {
				t.Fatalf("dropped %d, %d outputs", res.Dropped, len(res.Outputs))
			}
			for _, o := range res.Outputs {
				mustVerify(t, o.Data)
			}
		})
	}
}

func TestParseTokenRange(t *testing.T) {
	r, err := ParseTokenRange(token.Murmur3, "-100, 200")
	if err != nil || r.Left.Int64() != -100 || r.Right.Int64() != 200 {
		t.Fatalf("%+v %v", r, err)
	}
	for tok, in := range map[int64]bool{-100: false, -99: true, 200: true, 201: false} {
		if r.Contains(token.Murmur3, token.Murmur3Token(tok)) != in {
			t.Errorf("(-100,200] contains %d: want %v", tok, in)
		}
	}
	wrap := TokenRange{token.Murmur3Token(200), token.Murmur3Token(-100)}
	for tok, in := range map[int64]bool{-100: true, -99: false, 200: false, 201: true} {
		if wrap.Contains(token.Murmur3, token.Murmur3Token(tok)) != in {
			t.Errorf("(200,-100] contains %d: want %v", tok, in)
		}
	}
	for _, bad := range []string{"5", "a,5", "5,b"} {
		if _, err := ParseTokenRange(token.Murmur3, bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzParseTokenRange: any text parses or is refused without a panic, and
// a range parsed reads back the same from its tokens printed.
func FuzzParseTokenRange(f *testing.F) {
	for _, s := range []string{"-100,200", "0,0", "30,32", "ff,", ",", "-9223372036854775808,9223372036854775807", "1 , 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []token.Partitioner{token.Murmur3, token.ByteOrdered, token.Random} {
			r, err := ParseTokenRange(p, s)
			if err != nil {
				continue
			}
			again, err := ParseTokenRange(p, r.Left.String()+","+r.Right.String())
			if err != nil || p.Compare(again.Left, r.Left) != 0 || p.Compare(again.Right, r.Right) != 0 {
				t.Fatalf("%s: %q parsed as %v, which reads back as %v (%v)", p.Name(), s, r, again, err)
			}
			_ = r.Contains(p, p.MinimumToken())
		}
	})
}
