package cqltype

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"
)

// Benchmarks of the per-cell hot paths, each beside a baseline doing the
// nearest standard-library job on the same input, so results read as ratios:
//
//	go test -run XXX -bench . -benchmem ./format/cqltype/

func BenchmarkJSON(b *testing.B) {
	text := []byte("hi my name is sara! \"quoted\" and a tab\t")
	cases := []struct {
		name     string
		typ      string
		v        []byte
		baseline func(dst []byte) []byte
	}{
		{"int", "int", be32(-123456), func(dst []byte) []byte {
			return strconv.AppendInt(dst, int64(int32(binary.BigEndian.Uint32(be32(-123456)))), 10)
		}},
		{"text", "text", text, func(dst []byte) []byte {
			out, _ := json.Marshal(string(text))
			return append(dst, out...)
		}},
		{"double", "double", f64(9999999.999), func(dst []byte) []byte {
			return strconv.AppendFloat(dst, 9999999.999, 'g', -1, 64)
		}},
		{"timestamp", "timestamp", be64(1337000000000), func(dst []byte) []byte {
			return time.UnixMilli(1337000000000).UTC().AppendFormat(dst, `"2006-01-02 15:04:05.000Z07:00"`)
		}},
		{"decimal", "decimal", decimal("1995211882", 5), func(dst []byte) []byte {
			return strconv.AppendFloat(dst, 19952.11882, 'f', -1, 64)
		}},
		{"frozen-list-int", "frozen<list<int>>", coll(be32(1), be32(2), be32(3), be32(4)), func(dst []byte) []byte {
			out, _ := json.Marshal([]int32{1, 2, 3, 4})
			return append(dst, out...)
		}},
	}
	for _, c := range cases {
		typ, err := ParseCQL(c.typ)
		if err != nil {
			b.Fatal(err)
		}
		want, err := typ.AppendJSON(nil, c.v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/AppendJSON", func(b *testing.B) {
			dst := make([]byte, 0, 256)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				dst, _ = typ.AppendJSON(dst[:0], c.v)
			}
			if !bytes.Equal(dst, want) {
				b.Fatalf("got %s", dst)
			}
		})
		b.Run(c.name+"/baseline", func(b *testing.B) {
			dst := make([]byte, 0, 256)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				dst = c.baseline(dst[:0])
			}
		})
	}
}

func BenchmarkCompare(b *testing.B) {
	cases := []struct {
		name string
		typ  string
		x, y []byte
	}{
		{"int", "int", be32(1000), be32(1001)},
		{"text", "text", []byte("partition-000123"), []byte("partition-000124")},
		{"timeuuid", "timeuuid", timeUUID(1<<50, 1), timeUUID(1<<50+1, 1)},
		{"double", "double", f64(1.5), f64(math.Pi)},
	}
	for _, c := range cases {
		typ, err := ParseCQL(c.typ)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/Compare", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; i < b.N; i++ {
				n += typ.Compare(c.x, c.y)
			}
			if n != -b.N {
				b.Fatalf("compare sum %d", n)
			}
		})
		b.Run(c.name+"/baseline-bytes.Compare", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; i < b.N; i++ {
				n += bytes.Compare(c.x, c.y)
			}
			_ = n
		})
	}
}

func BenchmarkParse(b *testing.B) {
	s := m + "MapType(" + m + "UTF8Type," + m + "FrozenType(" + m + "ListType(" + m + "Int32Type)))"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHotPathsDoNotAllocate pins the zero-allocation promise of AppendJSON
// and Compare for single-value types, whatever the benchmark numbers.
func TestHotPathsDoNotAllocate(t *testing.T) {
	values := map[string][]byte{
		"int": be32(7), "bigint": be64(-7), "text": []byte("abc\n"), "ascii": []byte("x"),
		"double": f64(1.5), "float": f32(2.5), "timestamp": be64(1337000000000), "uuid": make([]byte, 16),
		"timeuuid": timeUUID(5, 5), "boolean": {1}, "blob": {1, 2}, "date": be32(math.MinInt32),
		"inet": {1, 2, 3, 4}, "smallint": be16(3), "tinyint": {3}, "time": be64(5), "varint": {1},
		"frozen<list<int>>": coll(be32(1), be32(2)), "tuple<int, text>": tuple(be32(1), []byte("a")),
		"decimal": decimal("1995211882", 5), "vector<float, 2>": append(f32(1), f32(2)...),
	}
	dst := make([]byte, 0, 256)
	for name, v := range values {
		typ := cqlType(t, name)
		// A second valid value that differs in its last byte.
		w := append([]byte(nil), v...)
		w[len(w)-1] ^= 1
		allocs := testing.AllocsPerRun(100, func() {
			dst, _ = typ.AppendJSON(dst[:0], v)
			_ = typ.Compare(v, w)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per AppendJSON+Compare", name, allocs)
		}
	}
}
