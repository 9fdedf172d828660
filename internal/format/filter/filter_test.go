package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/internal/fixturekeys"
	"github.com/sstabletool/sstabletool/internal/format/murmur"
)

// Every fixture's Filter.db decodes, claims every key of its Index.db,
// re-encodes to the same bytes, and is reproduced byte for byte by a filter
// built from those keys with the fp chance its Statistics.db records.
func TestFixtures(t *testing.T) {
	for _, tb := range fixturekeys.All(t) {
		t.Run(tb.Name, func(t *testing.T) {
			raw := tb.Component(t, "Filter.db")
			old := tb.Version < "na"
			f, err := Decode(raw, old)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tb.Keys {
				if !f.MightContain(k) {
					t.Errorf("key %x missing from the filter", k)
				}
			}
			if got := f.Encode(old); !bytes.Equal(got, raw) {
				t.Errorf("re-encoded filter differs:\n got %x\nwant %x", got, raw)
			}
			built, err := New(int64(len(tb.Keys)), tb.FPChance)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tb.Keys {
				built.Add(k)
			}
			if got := built.Encode(old); !bytes.Equal(got, raw) {
				t.Errorf("filter rebuilt from %d keys at fp %v differs:\n got %x\nwant %x", len(tb.Keys), tb.FPChance, got, raw)
			}
		})
	}
}

// The two serializations really differ: reading an old-format filter as new
// format scrambles bits within each word, and some key is then reported
// absent. This is what makes the version flag matter.
func TestFormatFlagMatters(t *testing.T) {
	for _, tb := range fixturekeys.All(t) {
		raw := tb.Component(t, "Filter.db")
		wrong, err := Decode(raw, tb.Version >= "na")
		if err != nil {
			t.Fatal(err)
		}
		missing := 0
		for _, k := range tb.Keys {
			if !wrong.MightContain(k) {
				missing++
			}
		}
		if missing == 0 {
			t.Errorf("%s: decoding with the other format still finds all %d keys", tb.Name, len(tb.Keys))
		}
	}
}

// The sizing table decides bytes on disk; the fixtures (fp 0.01) confirm
// 5 hashes at 10 bits per key, the rest follow BloomCalculations.
func TestSizing(t *testing.T) {
	for _, tc := range []struct {
		fp              float64
		hashes, buckets int
	}{
		{0.01, 5, 10},
		{0.1, 3, 5},
		{0.001, 7, 15},
		{0.5, 2, 1}, // Cassandra's (K, buckets) argument swap for fp >= 0.393
		{MinFPChance, 14, 20},
	} {
		h, b, err := bloomSpec(20, tc.fp)
		if err != nil || h != tc.hashes || b != tc.buckets {
			t.Errorf("bloomSpec(20, %v) = %d hashes, %d buckets, %v; want %d, %d", tc.fp, h, b, err, tc.hashes, tc.buckets)
		}
	}
	if _, err := New(10, MinFPChance/2); err == nil {
		t.Error("an fp chance below the table's minimum was accepted")
	}
	f, err := New(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 keys * 10 bits + 20 = 10020 bits -> 157 words.
	if f.Capacity() != 157*64 || f.HashCount() != 5 {
		t.Errorf("New(1000, 0.01): capacity %d, %d hashes; want %d, 5", f.Capacity(), f.HashCount(), 157*64)
	}
	ap, err := New(1000, 1.0)
	if err != nil || !ap.IsAlwaysPresent() || len(ap.Encode(false)) != 0 || !ap.MightContain([]byte("x")) {
		t.Errorf("fp 1.0 should give the always-present filter, got %+v, %v", ap, err)
	}
}

// A filter sized for n keys at fp 0.01 stays near that rate on keys it has
// never seen, and never misses a key it has.
func TestFalsePositiveRate(t *testing.T) {
	const n = 5000
	f, err := New(n, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f.Add(fmt.Appendf(nil, "in-%d", i))
	}
	for i := range n {
		if !f.MightContain(fmt.Appendf(nil, "in-%d", i)) {
			t.Fatalf("added key in-%d reported absent", i)
		}
	}
	fp := 0
	const probes = 50000
	for i := range probes {
		if f.MightContain(fmt.Appendf(nil, "out-%d", i)) {
			fp++
		}
	}
	if rate := float64(fp) / probes; rate > 0.02 {
		t.Errorf("false-positive rate %.4f, want about 0.01", rate)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 5), 1)
	good = append(good, make([]byte, 8)...)
	for _, tc := range []struct {
		name   string
		b      []byte
		offset int64
		want   string
	}{
		{"short header", good[:5], 0, "hash count"},
		{"zero hashes", append([]byte{0, 0, 0, 0}, good[4:]...), 0, "hash count in 1..21"},
		{"too many hashes", append([]byte{0, 0, 0, 22}, good[4:]...), 0, "hash count in 1..21"},
		{"truncated words", good[:12], 4, "word count"},
		{"trailing bytes", append(bytes.Clone(good), 0), 4, "word count"},
		{"negative words", append(append([]byte{0, 0, 0, 5}, 0xff, 0xff, 0xff, 0xff), good[8:]...), 4, "word count"},
		{"huge word count", append(append([]byte{0, 0, 0, 5}, 0x7f, 0xff, 0xff, 0xff), good[8:]...), 4, "word count"},
	} {
		_, err := Decode(tc.b, false)
		var ce *corrupt.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a CorruptError", tc.name, err)
			continue
		}
		if ce.Component != "Filter.db" || ce.Offset != tc.offset || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %q (offset %d), want offset %d mentioning %q", tc.name, err, ce.Offset, tc.offset, tc.want)
		}
	}
	f, err := Decode(nil, false)
	if err != nil || !f.IsAlwaysPresent() {
		t.Errorf("an empty Filter.db should be the always-present filter, got %v, %v", f, err)
	}
}

func TestReadFileNamesFile(t *testing.T) {
	path := t.TempDir() + "/nb-1-big-Filter.db"
	if err := writeFile(path, []byte{0, 0, 0, 5, 0}); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path, false)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "Filter.db at byte 0") {
		t.Errorf("error %v does not name the file, component and offset", err)
	}
}

func TestMightContainDoesNotAllocate(t *testing.T) {
	f, _ := New(100, 0.01)
	key := []byte("partition")
	f.Add(key)
	if n := testing.AllocsPerRun(100, func() { f.MightContain(key) }); n != 0 {
		t.Errorf("%v allocations per lookup", n)
	}
}

func FuzzDecodeFilter(f *testing.F) {
	f.Add([]byte{0, 0, 0, 5, 0, 0, 0, 1, 0, 0x22, 0x32, 0x40, 0xc8, 0x82, 0x20, 0x12}, true)
	f.Add([]byte{0, 0, 0, 5, 0, 0, 0, 2, 0x84, 0x42, 0x21, 6, 0, 1, 4, 0, 0, 0xa6, 2, 0x20, 4, 0, 0xc0, 8}, false)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, b []byte, old bool) {
		bf, err := Decode(b, old)
		if err != nil {
			var ce *corrupt.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			return
		}
		if got := bf.Encode(old); !bytes.Equal(got, b) {
			t.Fatalf("decode/encode changed the bytes:\n got %x\nwant %x", got, b)
		}
		bf.MightContain(b)
		bf.Add(b)
		if !bf.MightContain(b) {
			t.Fatal("added key not found")
		}
	})
}

// Add sets a key's bits in batches (settle); whatever the batch, the
// filter reads as if each key were set at once: every key added is found
// right after its Add, and the bitset is the one Cassandra's index
// formula gives key by key (|(h1 + j*h0) mod capacity|, Java's signed
// arithmetic), for a key count that is no multiple of the batch.
func TestAddBatchesSetTheSameBits(t *testing.T) {
	// A filter small enough for the 64-key batches, and one of 5 million
	// keys, set region by region (byRegion), given more keys than one batch
	// holds so that a batch is set by Add, one by MightContain and the
	// rest by Encode.
	for _, c := range []struct{ elements, keys int64 }{{5000, 4999}, {5_000_000, 90_001}} {
		f, err := New(c.elements, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		if f.byRegion() != (c.elements > 5000) || int64(len(f.bits)/16) >= c.keys*int64(f.HashCount()) {
			t.Fatalf("%d elements: %d bytes, %d hashes, not the case meant", c.elements, len(f.bits), f.HashCount())
		}
		want := make([]byte, len(f.Encode(false))-8)
		capacity := int64(len(want)) * 8
		for i := range c.keys {
			key := fmt.Appendf(nil, "key-%d", i)
			f.Add(key)
			if (i%7 == 0 && c.keys < 10000 || i == c.keys*2/3) && !f.MightContain(key) {
				t.Fatalf("key %d not found right after its Add", i)
			}
			h0, h1 := murmur.Hash128(key, 0)
			for j := range int64(f.HashCount()) {
				bit := (int64(h1) + j*int64(h0)) % capacity
				if bit < 0 {
					bit = -bit
				}
				want[bit>>3] |= 1 << (bit & 7)
			}
		}
		if got := f.Encode(false)[8:]; !bytes.Equal(got, want) {
			t.Fatalf("%d elements: the bitset differs from the keys' bits set one by one", c.elements)
		}
	}
}
