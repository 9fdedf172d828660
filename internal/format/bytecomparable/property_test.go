package bytecomparable

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
)

// gen returns a random valid serialized value of type t (never empty when
// noEmpty is set).
func gen(rng *rand.Rand, t *cqltype.Type, depth int) []byte {
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		// Favour zeros and 0xFF, which exercise escaping and signs.
		for i := range b {
			switch rng.Intn(6) {
			case 0:
				b[i] = 0
			case 1:
				b[i] = 0xFF
			}
		}
		return b
	}
	fixedInt := func(n int) []byte {
		b := randBytes(n)
		if rng.Intn(4) == 0 { // small magnitudes, both signs
			for i := range b[:n-1] {
				if b[0]&0x80 != 0 {
					b[i] = 0xFF
				} else {
					b[i] = 0
				}
			}
		}
		return b
	}
	switch t.Kind {
	case cqltype.Ascii, cqltype.Text, cqltype.Blob:
		return randBytes(rng.Intn(6))
	case cqltype.Inet:
		if rng.Intn(2) == 0 {
			return randBytes(4)
		}
		return randBytes(16)
	case cqltype.Boolean:
		return []byte{byte(rng.Intn(2))}
	case cqltype.TinyInt:
		return fixedInt(1)
	case cqltype.SmallInt:
		return fixedInt(2)
	case cqltype.Int, cqltype.Date:
		return fixedInt(4)
	case cqltype.Bigint, cqltype.Timestamp, cqltype.Time:
		return fixedInt(8)
	case cqltype.Float:
		b := randBytes(4)
		if f := math.Float32frombits(binary.BigEndian.Uint32(b)); f != f {
			return []byte{0x7f, 0xc0, 0, 0} // one NaN only: Java compares all NaNs equal, their bytes differ
		}
		return b
	case cqltype.Double:
		b := randBytes(8)
		if f := math.Float64frombits(binary.BigEndian.Uint64(b)); f != f {
			return []byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 0}
		}
		return b
	case cqltype.Varint:
		x := new(big.Int).SetBytes(randBytes(1 + rng.Intn(12)))
		if rng.Intn(2) == 0 {
			x.Neg(x)
		}
		return cqltype.VarintBytes(x)
	case cqltype.Decimal:
		x := new(big.Int).SetBytes(randBytes(1 + rng.Intn(6)))
		if rng.Intn(2) == 0 {
			x.Neg(x)
		}
		scale := int32(rng.Intn(40) - 20)
		if rng.Intn(10) == 0 {
			scale = int32(rng.Uint32())
		}
		return append(binary.BigEndian.AppendUint32(nil, uint32(scale)), cqltype.VarintBytes(x)...)
	case cqltype.UUID, cqltype.TimeUUID:
		b := randBytes(16)
		v := byte(rng.Intn(5))
		if t.Kind == cqltype.TimeUUID {
			v = 1
		}
		b[6] = b[6]&0x0F | v<<4
		return b
	case cqltype.List, cqltype.Set, cqltype.Map:
		per := 1
		if t.Kind == cqltype.Map {
			per = 2
		}
		n := rng.Intn(4)
		out := binary.BigEndian.AppendUint32(nil, uint32(n))
		for i := 0; i < n*per; i++ {
			e := gen(rng, t.Params[i%per], depth+1)
			out = append(binary.BigEndian.AppendUint32(out, uint32(len(e))), e...)
		}
		return out
	case cqltype.Tuple, cqltype.UDT:
		var out []byte
		n := 1 + rng.Intn(len(t.Params))
		for i := 0; i < n; i++ {
			if rng.Intn(4) == 0 {
				out = binary.BigEndian.AppendUint32(out, 0xFFFFFFFF)
				continue
			}
			e := gen(rng, t.Params[i], depth+1)
			out = append(binary.BigEndian.AppendUint32(out, uint32(len(e))), e...)
		}
		return out
	}
	panic("no generator for " + t.String())
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

var propertyTypes = []string{
	"AsciiType", "UTF8Type", "BytesType", "InetAddressType", "BooleanType", "ByteType", "ShortType",
	"Int32Type", "LongType", "TimestampType", "SimpleDateType", "TimeType", "FloatType", "DoubleType",
	"IntegerType", "DecimalType", "UUIDType", "TimeUUIDType",
	"ReversedType(org.apache.cassandra.db.marshal.Int32Type)",
	"ReversedType(org.apache.cassandra.db.marshal.UTF8Type)",
	"ReversedType(org.apache.cassandra.db.marshal.IntegerType)",
	"FrozenType(org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type))",
	"FrozenType(org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.UTF8Type))",
	"FrozenType(org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type))",
	"TupleType(org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.DoubleType)",
}

// TestOrderMatchesComparators checks the defining property: the bytes of
// one-column clusterings order like the type's comparator (cqltype.Compare,
// itself checked against Cassandra's comparators), and decode back.
func TestOrderMatchesComparators(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, class := range propertyTypes {
		ty := mustType(t, class)
		types := []*cqltype.Type{ty}
		vals := make([][]byte, 0, 160)
		for len(vals) < cap(vals) {
			v := gen(rng, ty, 0)
			if rng.Intn(20) == 0 && ty.Kind != cqltype.Ascii && ty.Kind != cqltype.Text && ty.Kind != cqltype.Blob {
				v = []byte{} // empty values sort first
			}
			vals = append(vals, v)
		}
		encs := make([][]byte, len(vals))
		for i, v := range vals {
			e, err := AppendClustering(nil, types, clustering.Clustering, [][]byte{v})
			if err != nil {
				t.Fatalf("%s %x: %v", class, v, err)
			}
			encs[i] = e
			dc, err := DecodeClustering(e, types)
			if err != nil || dc.Position != AtClustering || len(dc.Values) != 1 {
				t.Fatalf("%s: decode %x: %+v %v", class, e, dc, err)
			}
			if ty.Compare(dc.Values[0], v) != 0 || (ty.Kind != cqltype.Decimal && ty.Kind != cqltype.Tuple && !bytes.Equal(dc.Values[0], v)) {
				t.Fatalf("%s: %x encodes as %x, decodes to %x", class, v, e, dc.Values[0])
			}
		}
		for i := range vals {
			for j := range vals {
				want := sign(ty.Compare(vals[i], vals[j]))
				if got := sign(bytes.Compare(encs[i], encs[j])); got != want {
					t.Fatalf("%s: compare(%x, %x) = %d, bytes %x vs %x give %d", class, vals[i], vals[j], want, encs[i], encs[j], got)
				}
			}
		}
	}
}

// TestMultiColumnOrder checks that clusterings and bounds over several
// columns interleave as Cassandra's ClusteringComparator orders them.
func TestMultiColumnOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	types := []*cqltype.Type{mustType(t, "UTF8Type"), mustType(t, "ReversedType(org.apache.cassandra.db.marshal.LongType)"), mustType(t, "Int32Type")}
	type pos struct {
		vals [][]byte
		kind clustering.Kind
		enc  []byte
	}
	// cmp orders clusterings and bounds like ClusteringComparator.compare:
	// value by value, then by the kind's comparison to a clustering
	// (before for 0x20 bounds, after for 0x60 ones) on the shorter prefix.
	kindWeight := func(k clustering.Kind, n int) int {
		switch KindTerminator(k) {
		case LTNextComponent:
			return -1
		case GTNextComponent:
			return 1
		}
		return 0
	}
	cmp := func(a, b pos) int {
		for i := 0; i < len(a.vals) && i < len(b.vals); i++ {
			if c := types[i].Compare(a.vals[i], b.vals[i]); c != 0 {
				return sign(c)
			}
		}
		if len(a.vals) == len(b.vals) {
			return sign(kindWeight(a.kind, 0) - kindWeight(b.kind, 0))
		}
		if len(a.vals) < len(b.vals) {
			return kindWeight(a.kind, 0)
		}
		return -kindWeight(b.kind, 0)
	}
	var ps []pos
	for len(ps) < 300 {
		n := 3
		kind := clustering.Clustering
		if rng.Intn(3) == 0 {
			n = rng.Intn(4)
			kind = []clustering.Kind{clustering.InclStartBound, clustering.ExclStartBound, clustering.InclEndBound, clustering.ExclEndBound}[rng.Intn(4)]
		}
		p := pos{kind: kind}
		for i := 0; i < n; i++ {
			v := gen(rng, types[i], 0)
			if i == 0 {
				v = v[:min(len(v), 1)] // few distinct first values, so later columns matter
			}
			p.vals = append(p.vals, v)
		}
		e, err := AppendClustering(nil, types, kind, p.vals)
		if err != nil {
			t.Fatal(err)
		}
		p.enc = e
		ps = append(ps, p)
	}
	for _, a := range ps {
		for _, b := range ps {
			if want, got := cmp(a, b), sign(bytes.Compare(a.enc, b.enc)); got != want {
				t.Fatalf("%v %x vs %v %x: comparator %d, bytes %d (%x vs %x)", a.kind, a.vals, b.kind, b.vals, want, got, a.enc, b.enc)
			}
		}
	}
}
