package cqltype

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// ordered checks that each value sorts strictly before the next, in both
// directions, and that a Reversed type inverts the order.
func ordered(t *testing.T, typeName string, values ...[]byte) {
	t.Helper()
	typ := cqlType(t, typeName)
	rev := *typ
	rev.Reversed = true
	for i := range values {
		for j := range values {
			want := sign(i - j)
			if got := typ.Compare(values[i], values[j]); got != want {
				t.Errorf("%s: Compare(%x, %x) = %d, want %d", typeName, values[i], values[j], got, want)
			}
			if got := rev.Compare(values[i], values[j]); got != -want {
				t.Errorf("reversed %s: Compare(%x, %x) = %d, want %d", typeName, values[i], values[j], got, -want)
			}
		}
	}
}

func timeUUID(ts int64, lsb uint64) []byte {
	msb := uint64(ts)&0xFFFFFFFF<<32 | (uint64(ts)>>32&0xFFFF)<<16 | (uint64(ts)>>48&0x0FFF | 0x1000)
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, msb), lsb)
}

func TestCompareOrders(t *testing.T) {
	ordered(t, "int", []byte{}, be32(math.MinInt32), be32(-1), be32(0), be32(1), be32(math.MaxInt32))
	ordered(t, "bigint", []byte{}, be64(math.MinInt64), be64(-1), be64(0), be64(256), be64(math.MaxInt64))
	ordered(t, "timestamp", []byte{}, be64(-631152000000), be64(0), be64(1337000000000))
	ordered(t, "smallint", be16(-300), be16(-1), be16(0), be16(300))
	ordered(t, "tinyint", []byte{0x80}, []byte{0xFF}, []byte{0}, []byte{0x7F})
	ordered(t, "boolean", []byte{}, []byte{0}, []byte{1})
	ordered(t, "text", []byte{}, []byte("A"), []byte("a"), []byte("ab"), []byte("é"))
	ordered(t, "date", be32(0), be32(math.MinInt32), be32(-1))
	ordered(t, "varint", []byte{}, bigBytes("-100000000000000000000"), bigBytes("-129"), bigBytes("-128"), bigBytes("-1"),
		bigBytes("0"), bigBytes("127"), bigBytes("128"), bigBytes("100000000000000000000"))
	ordered(t, "decimal", []byte{}, decimal("-5", 0), decimal("1", 14), decimal("1", 1), decimal("1", 0),
		decimal("1", -2), decimal("1", -2147483648))
	ordered(t, "double", []byte{}, f64(math.Inf(-1)), f64(-1.5), f64(math.Copysign(0, -1)), f64(0), f64(1e300), f64(math.Inf(1)), f64(math.NaN()))
	ordered(t, "float", []byte{}, f32(-2.1), f32(0), f32(100000000.9))
	ordered(t, "timeuuid", []byte{}, timeUUID(1, 0xFF), timeUUID(1, 0x7F), timeUUID(1<<40, 0), timeUUID(1<<59, 0))
	ordered(t, "uuid", []byte{}, timeUUID(5, 0), timeUUID(6, 0),
		mustHex("00000000-0000-4000-8000-000000000000"), mustHex("ffffffff-ffff-4fff-8fff-ffffffffffff"))
	ordered(t, "frozen<list<int>>", coll(), coll(be32(-1)), coll(be32(1)), coll(be32(1), be32(0)), coll(be32(2)))
	ordered(t, "frozen<map<text, int>>", mapv([]byte("a"), be32(2)), mapv([]byte("a"), be32(3)), mapv([]byte("b"), be32(0)))
	ordered(t, "tuple<int, text>", tuple(), tuple(be32(1), nil), tuple(be32(1), []byte("a")), tuple(be32(2)))
	ordered(t, "vector<int, 2>", append(be32(-1), be32(9)...), append(be32(0), be32(0)...), append(be32(0), be32(1)...))
	ordered(t, "inet", []byte{1, 2, 3, 4}, []byte{10, 0, 0, 1}, mustHex("20010db8000000000000ff0000428329"))

	typ := cqlType(t, "decimal")
	if c := typ.Compare(decimal("10", 1), decimal("100", 2)); c != 0 {
		t.Errorf("1.0 vs 1.00 = %d, want 0 (BigDecimal.compareTo ignores scale)", c)
	}
	tup := cqlType(t, "tuple<int, text>")
	if c := tup.Compare(tuple(be32(1)), tuple(be32(1), nil)); c != 0 {
		t.Errorf("(1) vs (1, null) = %d, want 0", c)
	}
}

// TestCompareMatchesNumbers checks the comparators against the numbers the
// bytes encode, on random values.
func TestCompareMatchesNumbers(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	intT, bigT, varT, decT, dblT, tuT := cqlType(t, "int"), cqlType(t, "bigint"), cqlType(t, "varint"),
		cqlType(t, "decimal"), cqlType(t, "double"), cqlType(t, "timeuuid")
	for i := 0; i < 2000; i++ {
		a, b := int64(r.Uint64()), int64(r.Uint64())
		if i%2 == 0 {
			a, b = a>>40, b>>40
		}
		if got, want := bigT.Compare(be64(a), be64(b)), cmp.Compare(a, b); got != want {
			t.Fatalf("bigint %d vs %d: %d", a, b, got)
		}
		if got, want := intT.Compare(be32(int32(a)), be32(int32(b))), cmp.Compare(int64(int32(a)), int64(int32(b))); got != want {
			t.Fatalf("int %d vs %d: %d", int32(a), int32(b), got)
		}
		x := new(big.Int).Mul(big.NewInt(a), big.NewInt(b>>20))
		y := new(big.Int).Mul(big.NewInt(b), big.NewInt(a>>30))
		if got := varT.Compare(bigBytes(x.String()), bigBytes(y.String())); got != x.Cmp(y) {
			t.Fatalf("varint %s vs %s: %d", x, y, got)
		}
		sa, sb := int32(r.Intn(40)-20), int32(r.Intn(40)-20)
		ra, rb := decRat(x, sa), decRat(y, sb)
		if got := decT.Compare(decimal(x.String(), sa), decimal(y.String(), sb)); got != ra.Cmp(rb) {
			t.Fatalf("decimal %s/10^%d vs %s/10^%d: %d", x, sa, y, sb, got)
		}
		fa, fb := math.Float64frombits(r.Uint64()), math.Float64frombits(r.Uint64())
		if !math.IsNaN(fa) && !math.IsNaN(fb) && fa != fb {
			if got := dblT.Compare(f64(fa), f64(fb)); got != boolCompare(fa > fb, fa < fb) {
				t.Fatalf("double %v vs %v: %d", fa, fb, got)
			}
		}
		ta, tb := int64(r.Uint64()>>4), int64(r.Uint64()>>4)
		if got := tuT.Compare(timeUUID(ta, r.Uint64()), timeUUID(tb, r.Uint64())); ta != tb && got != cmp.Compare(ta, tb) {
			t.Fatalf("timeuuid %d vs %d: %d", ta, tb, got)
		}
	}
}

// decRat is unscaled×10^-scale as an exact rational.
func decRat(unscaled *big.Int, scale int32) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(scale))), nil)
	if scale >= 0 {
		return new(big.Rat).SetFrac(unscaled, p)
	}
	return new(big.Rat).SetInt(new(big.Int).Mul(unscaled, p))
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
