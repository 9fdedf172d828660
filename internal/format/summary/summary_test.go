package summary

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixturekeys"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// Every fixture's Summary.db decodes, re-encodes byte for byte, agrees with
// its Index.db (first/last keys, sampled keys and their Index.db offsets),
// and is rebuilt byte for byte from the Index.db keys and offsets.
func TestFixtures(t *testing.T) {
	for _, tb := range fixturekeys.All(t) {
		t.Run(tb.Name, func(t *testing.T) {
			raw := tb.Component(t, "Summary.db")
			s, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Encode(); !bytes.Equal(got, raw) {
				t.Errorf("re-encoded summary differs:\n got %x\nwant %x", got, raw)
			}
			if s.MinIndexInterval != 128 || s.SamplingLevel != BaseSamplingLevel {
				t.Errorf("interval %d level %d; want the defaults 128, 128", s.MinIndexInterval, s.SamplingLevel)
			}
			keys := tb.Keys
			if !bytes.Equal(s.First, keys[0]) || !bytes.Equal(s.Last, keys[len(keys)-1]) {
				t.Errorf("first/last %x/%x; Index.db has %x/%x", s.First, s.Last, keys[0], keys[len(keys)-1])
			}
			for i := range s.Len() {
				j := i * s.MinIndexInterval // full sampling: every interval-th key
				if !bytes.Equal(s.Key(i), keys[j]) || s.Position(i) != tb.IndexPos[j] {
					t.Errorf("entry %d = %x@%d; Index.db entry %d is %x@%d", i, s.Key(i), s.Position(i), j, keys[j], tb.IndexPos[j])
				}
			}
			p, err := token.ForName(tb.Partitioner)
			if err != nil {
				t.Fatal(err)
			}
			for j, k := range keys {
				pos, ok := s.Floor(k, p.CompareKeys)
				i := s.FloorIndex(k, p.CompareKeys)
				if !ok || pos > tb.IndexPos[j] || j-i*s.MinIndexInterval >= s.EffectiveIntervalAfter(i) {
					t.Errorf("Floor(%x) = %d, %v (entry %d); the key's Index.db entry is %d", k, pos, ok, i, tb.IndexPos[j])
				}
			}
			entries := make([]Entry, len(keys))
			for j := range keys {
				entries[j] = Entry{Key: keys[j], Position: tb.IndexPos[j]}
			}
			built, err := Build(entries, 128, BaseSamplingLevel)
			if err != nil {
				t.Fatal(err)
			}
			if got := built.Encode(); !bytes.Equal(got, raw) {
				t.Errorf("summary rebuilt from %d Index.db entries differs:\n got %x\nwant %x", len(keys), got, raw)
			}
		})
	}
}

// A small summary laid out by hand from the format description: the
// offsets and Index.db positions are little-endian, everything else
// big-endian. This pins the byte order the fixtures cannot (their only
// sampled position is 0).
func TestLayoutByHand(t *testing.T) {
	entries := []Entry{{[]byte("a"), 0}, {[]byte("b"), 0x1234}, {[]byte("cc"), 0x010203}, {[]byte("d"), 0x7f}}
	s, err := Build(entries, 2, BaseSamplingLevel) // samples "a" and "cc"
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 0, 0, 2, // min index interval
		0, 0, 0, 2, // entries
		0, 0, 0, 0, 0, 0, 0, 8 + 9 + 10, // region size: offsets + ("a", pos) + ("cc", pos)
		0, 0, 0, 128, // sampling level
		0, 0, 0, 2, // entries at full sampling: ceil(4/2)
		8, 0, 0, 0, // offset of "a" (LE, from region start)
		17, 0, 0, 0, // offset of "cc"
		'a', 0, 0, 0, 0, 0, 0, 0, 0,
		'c', 'c', 3, 2, 1, 0, 0, 0, 0, 0,
		0, 0, 0, 1, 'a', // first key
		0, 0, 0, 1, 'd', // last key
	}
	if got := s.Encode(); !bytes.Equal(got, want) {
		t.Fatalf("encoded\n got %x\nwant %x", got, want)
	}
	d, err := Decode(want)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 2 || string(d.Key(1)) != "cc" || d.Position(1) != 0x010203 {
		t.Errorf("decoded entry 1 = %q@%#x", d.Key(1), d.Position(1))
	}
}

func manyEntries(n int) []Entry {
	out := make([]Entry, n)
	for i := range out {
		out[i] = Entry{Key: fmt.Appendf(nil, "key%06d", i), Position: int64(i) * 37}
	}
	return out
}

func TestFloorOnLargeSummary(t *testing.T) {
	entries := manyEntries(10000)
	s, err := Build(entries, 16, BaseSamplingLevel)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 625 || s.SizeAtFullSampling != 625 || s.EstimatedKeyCount() != 626*16 {
		t.Fatalf("Len %d, full %d, estimate %d", s.Len(), s.SizeAtFullSampling, s.EstimatedKeyCount())
	}
	for j, e := range entries {
		pos, ok := s.Floor(e.Key, bytes.Compare)
		if want := int64(j/16*16) * 37; !ok || pos != want {
			t.Fatalf("Floor(%s) = %d, %v; want %d", e.Key, pos, ok, want)
		}
	}
	if _, ok := s.Floor([]byte("a"), bytes.Compare); ok {
		t.Error("a key before the first sampled key was found")
	}
	if pos, ok := s.Floor([]byte("zzz"), bytes.Compare); !ok || pos != 9984*37 {
		t.Errorf("Floor past the end = %d, %v", pos, ok)
	}
	again, err := Decode(s.Encode())
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Len() {
		if !bytes.Equal(again.Key(i), s.Key(i)) || again.Position(i) != s.Position(i) {
			t.Fatalf("entry %d changed through Encode/Decode", i)
		}
	}
}

// Facts from Cassandra's IndexSummaryTest.
func TestDownsamplingTables(t *testing.T) {
	for level, want := range map[int][]int{
		1:  {0},
		2:  {1, 0},
		4:  {3, 1, 2, 0},
		8:  {7, 3, 5, 1, 6, 2, 4, 0},
		16: {15, 7, 11, 3, 13, 5, 9, 1, 14, 6, 10, 2, 12, 4, 8, 0},
	} {
		if got := samplingPattern(level); !slices.Equal(got, want) {
			t.Errorf("samplingPattern(%d) = %v, want %v", level, got, want)
		}
	}
	for level, want := range map[int][]int{4: {0, 32, 64, 96}, 2: {0, 64}, 1: {0}} {
		if got := originalIndexes(level); !slices.Equal(got, want) {
			t.Errorf("originalIndexes(%d) = %v, want %v", level, got, want)
		}
	}
	for i := range BaseSamplingLevel - 2 {
		if got := effectiveIntervalAfter(i, 127, 128); got != 128 {
			t.Errorf("effectiveIntervalAfter(%d, 127) = %d, want 128", i, got)
		}
	}
	if got := effectiveIntervalAfter(126, 127, 128); got != 256 {
		t.Errorf("effectiveIntervalAfter(126, 127) = %d, want 256", got)
	}
	for i := range 2 {
		if got := effectiveIntervalAfter(i, 2, 128); got != 64*128 {
			t.Errorf("effectiveIntervalAfter(%d, 2) = %d, want %d", i, got, 64*128)
		}
	}
}

// Sampling at level L while writing and downsampling a full summary to L
// are separate algorithms in Cassandra (IndexSummaryBuilder's skip test vs.
// downsample's removal rounds); they must keep the same entries. Floor
// then still finds every key within the effective interval.
func TestBuildAtLevelMatchesDownsample(t *testing.T) {
	entries := manyEntries(3000)
	full, err := Build(entries, 2, BaseSamplingLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []int{127, 100, 64, 37, 2} {
		built, err := Build(entries, 2, level)
		if err != nil {
			t.Fatal(err)
		}
		down, err := full.Downsample(level)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(built.Encode(), down.Encode()) {
			t.Errorf("level %d: built %d entries, downsampled %d; bytes differ", level, built.Len(), down.Len())
		}
		if want := int(math.Ceil(float64(level*full.SizeAtFullSampling) / BaseSamplingLevel)); down.Len() != want {
			t.Errorf("level %d: %d entries, Cassandra expects %d", level, down.Len(), want)
		}
		for j, e := range entries {
			i := down.FloorIndex(e.Key, bytes.Compare)
			start := int(down.Position(i) / 37)
			if start > j || j-start >= down.EffectiveIntervalAfter(i) {
				t.Fatalf("level %d: key %d is %d entries after its floor (entry %d), beyond the effective interval %d",
					level, j, j-start, i, down.EffectiveIntervalAfter(i))
			}
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	if _, err := NewBuilder(10, 0, 128); err == nil {
		t.Error("min index interval 0 accepted")
	}
	if _, err := NewBuilder(10, 128, 129); err == nil {
		t.Error("sampling level 129 accepted")
	}
	if _, err := Build(nil, 128, 128); err == nil {
		t.Error("an empty summary was built")
	}
	// So many keys that 72 bytes per sampled entry passes 2GiB: Cassandra
	// widens the interval to ceil(keys*72 / MaxInt32).
	b, err := NewBuilder(1<<33, 128, 128)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(math.Ceil(float64(int64(1<<33)*72) / math.MaxInt32)); b.minIndexInterval != want {
		t.Errorf("interval %d, want %d", b.minIndexInterval, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, err := Build([]Entry{{[]byte("a"), 0}, {[]byte("b"), 9}}, 1, BaseSamplingLevel)
	if err != nil {
		t.Fatal(err)
	}
	raw := good.Encode()
	patch := func(at int, v ...byte) []byte {
		b := bytes.Clone(raw)
		copy(b[at:], v)
		return b
	}
	for _, tc := range []struct {
		name   string
		b      []byte
		offset int64
		want   string
	}{
		{"short", raw[:10], 0, "header"},
		{"interval 0", patch(0, 0, 0, 0, 0), 0, "min index interval"},
		{"no entries", patch(4, 0, 0, 0, 0), 4, "entry count >= 1"},
		{"huge count", patch(4, 0x7f, 0xff, 0xff, 0xff), 4, "entry count"},
		{"region too big", patch(8, 0, 0, 0, 0, 0, 0, 1, 0), 8, "region size"},
		{"negative region", patch(8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 8, "region size"},
		{"level 0", patch(16, 0, 0, 0, 0), 16, "sampling level"},
		{"level 200", patch(16, 0, 0, 0, 200), 16, "sampling level"},
		{"first offset", patch(24, 9, 0, 0, 0), 24, "first entry offset to be 8"},
		{"offsets backwards", patch(28, 9, 0, 0, 0), 28, "entry 1"},
		{"offset past end", patch(28, 0xff, 0, 0, 0), 28, "entry 1"},
		{"truncated last key", raw[:len(raw)-1], int64(len(raw) - 5), "last key length"},
		{"negative first key length", patch(len(raw)-10, 0xff, 0xff, 0xff, 0xff), int64(len(raw) - 10), "first key length"},
		{"trailing", append(bytes.Clone(raw), 0), int64(len(raw)), "end of the file"},
	} {
		_, err := Decode(tc.b)
		var ce *corrupt.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a CorruptError", tc.name, err)
			continue
		}
		if ce.Component != "Summary.db" || ce.Offset != tc.offset || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %q at %d, want offset %d mentioning %q", tc.name, err, ce.Offset, tc.offset, tc.want)
		}
	}
	path := t.TempDir() + "/nb-1-big-Summary.db"
	if err := os.WriteFile(path, raw[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), path+": Summary.db at byte 0") {
		t.Errorf("ReadFile error %v does not name the file", err)
	}
}

func FuzzDecodeSummary(f *testing.F) {
	s, _ := Build(manyEntries(40), 4, 100)
	f.Add(s.Encode())
	one, _ := Build([]Entry{{[]byte{0, 0, 0, 1}, 0}}, 128, BaseSamplingLevel)
	f.Add(one.Encode())
	if fixtures.Root() != "" {
		for _, tb := range fixturekeys.All(f) {
			f.Add(tb.Component(f, "Summary.db"))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			var ce *corrupt.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			return
		}
		if got := s.Encode(); !bytes.Equal(got, b) {
			t.Fatalf("decode/encode changed the bytes:\n got %x\nwant %x", got, b)
		}
		for i := range s.Len() {
			_ = s.Key(i)
			_ = s.Position(i)
			_ = s.EffectiveIntervalAfter(i)
		}
		s.Floor(b, bytes.Compare)
		if s.SamplingLevel > 1 {
			s.Downsample(s.SamplingLevel - 1)
		}
	})
}

func TestFloorDoesNotAllocate(t *testing.T) {
	s, err := Build(manyEntries(1000), 4, BaseSamplingLevel)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("key000500")
	cmp := token.Murmur3.CompareKeys
	if n := testing.AllocsPerRun(100, func() { s.Floor(key, cmp) }); n != 0 {
		t.Errorf("%v allocations per Floor", n)
	}
}

func BenchmarkFloor(b *testing.B) {
	entries := manyEntries(100000)
	s, err := Build(entries, 128, BaseSamplingLevel)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.Floor(entries[i%len(entries)].Key, bytes.Compare)
		i += 7919
	}
}

// A lookup asks for the interval after the sample it starts from; at a
// downsampled level that must not rebuild Downsampling's tables per key.
func TestEffectiveIntervalAfterDoesNotAllocate(t *testing.T) {
	s, err := Build(manyEntries(1000), 4, BaseSamplingLevel)
	if err != nil {
		t.Fatal(err)
	}
	down, err := s.Downsample(37)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { down.EffectiveIntervalAfter(5) }); n != 0 {
		t.Errorf("%v allocations per EffectiveIntervalAfter", n)
	}
}

func BenchmarkEffectiveIntervalAfter(b *testing.B) {
	s, err := Build(manyEntries(10000), 128, BaseSamplingLevel)
	if err != nil {
		b.Fatal(err)
	}
	down, err := s.Downsample(64)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		down.EffectiveIntervalAfter(i % down.Len())
		i++
	}
}
