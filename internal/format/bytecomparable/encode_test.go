package bytecomparable

import (
	"bytes"
	"encoding/hex"
	"math/big"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "·", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustType(t testing.TB, class string) *cqltype.Type {
	t.Helper()
	if !strings.Contains(class, ".") && !strings.Contains(class, "(") {
		class = "org.apache.cassandra.db.marshal." + class
	}
	ty, err := cqltype.Parse(class)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// The examples of ByteComparable.md and of the ByteSource comments that
// agree with the code (the document is not normative; see docs/bti.md).
func TestEscapedVectors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"22 00", "22 00 FE"},
		{"22 00 00 33", "22 00 FE FF 33 00"},
		{"22 00 11", "22 00 FF 11 00"},
		{"41 00 00 42", "41 00 FE FF 42 00"},
		{"41 00 42 00", "41 00 FF 42 00 FE"},
		{"41 00", "41 00 FE"},
		{"41 42", "41 42 00"},
		{"", "00"},
	} {
		got := AppendEscaped(nil, unhex(t, c.in))
		if !bytes.Equal(got, unhex(t, c.want)) {
			t.Errorf("escape(%s) = %x, want %s", c.in, got, c.want)
		}
	}
}

func TestValueVectors(t *testing.T) {
	for _, c := range []struct{ typ, in, want string }{
		{"Int32Type", "00000001", "80000001"},
		{"ShortType", "FFFF", "7FFF"},
		{"ByteType", "00", "80"},
		{"ByteType", "FE", "7E"},
		{"Int32Type", "7FFFFFFF", "FFFFFFFF"},
		// bigint: variable-length signed
		{"LongType", "0000000000000001", "81"},
		{"LongType", "FFFFFFFFFFFFFFFF", "7F"},
		{"LongType", "0000000000000000", "80"},
		{"LongType", "000000000000003F", "BF"},
		{"LongType", "FFFFFFFFFFFFFFC0", "40"},
		{"LongType", "0000000000000040", "C040"},
		{"LongType", "FFFFFFFFFFFFFFBF", "3FBF"},
		{"LongType", "0000000000001FFF", "DFFF"},
		{"LongType", "0000000000002000", "E02000"},
		{"LongType", "000000007FFFFFFF", "F87FFFFFFF"},
		{"LongType", "8000000000000000", "000000000000000000"},
		// varint: current encoding
		{"IntegerType", "00", "80"},
		{"IntegerType", "01", "81"},
		{"IntegerType", "FF", "7F"},
		{"IntegerType", "00FF", "C0FF"},
		{"IntegerType", "FF00", "3F00"},
		{"IntegerType", "0100", "C100"},
		{"IntegerType", "010000", "E10000"},
		{"IntegerType", "FF00000000", "0700000000"},
		{"IntegerType", "01" + strings.Repeat("00", 128), "FF7A01" + strings.Repeat("00", 128)},
		{"IntegerType", "FF" + strings.Repeat("00", 256), "007F06" + strings.Repeat("00", 256)},
		// Seven significant bytes take the full form in the code
		// (IntegerType: limit - p < FULL_FORM_THRESHOLD), not the varint
		// form ByteComparable.md's table shows.
		{"IntegerType", "00FFFFFFFFFFFFFF", "FF00FFFFFFFFFFFFFF"},
		// floats
		{"FloatType", "3F800000", "BF800000"},
		{"FloatType", "00000000", "80000000"},
		{"FloatType", "80000000", "7FFFFFFF"},
		{"FloatType", "BF800000", "407FFFFF"},
		{"DoubleType", "3FF0000000000000", "BFF0000000000000"},
		{"DoubleType", "7FF0000000000000", "FFF0000000000000"},
		{"DoubleType", "FFF0000000000000", "000FFFFFFFFFFFFF"},
		{"DoubleType", "7FF8000000000000", "FFF8000000000000"},
		// uuids
		{"UUIDType", "cc520882950744fb8fc9b349ecdee658", "4cc52088295074fb8fc9b349ecdee658"},
		{"UUIDType", "2a92d750d8dc11e6a2decf8ecd4cf053", "11e6d8dc2a92d750a2decf8ecd4cf053"},
		// decimals: scale (int) then unscaled varint
		{"DecimalType", "00000001 0B", "C1 01 81 8A 00"},    // 1.1
		{"DecimalType", "00000000 01", "C1 01 81 00"},       // 1
		{"DecimalType", "00000002 01", "C0 81 00"},          // 0.01
		{"DecimalType", "00000000 00", "80"},                // 0
		{"DecimalType", "00000002 FF", "40 7F 00"},          // -0.01 (ByteComparable.md shows 40 81 00, the code writes 0x80-1)
		{"DecimalType", "00000000 FF", "3F FF 7F 00"},       // -1
		{"DecimalType", "00000001 F5", "3F FF 7E DA 00"},    // -1.1
		{"DecimalType", "00000001 FC 23", "3F FF 1D 8A 00"}, // -98.9
		{"DecimalType", "00000000 9D", "3F FF 1D 00"},       // -99
		{"DecimalType", "00000001 FC 19", "3F FF 1C 8A 00"}, // -99.9
		{"DecimalType", "FFFFF831 AF", "3E FC 17 77 DA 00"}, // -8.1e2000
		{"DecimalType", "000007D1 AF", "42 03 E7 77 DA 00"}, // -8.1e-2000
		{"DecimalType", "000007D1 51", "BE FC 19 88 8A 00"}, // 8.1e-2000
		{"DecimalType", "FFFFF831 51", "C2 03 E9 88 8A 00"}, // 8.1e2000
	} {
		ty := mustType(t, c.typ)
		got, null, err := AppendValue(nil, ty, unhex(t, c.in))
		if err != nil || null || !bytes.Equal(got, unhex(t, c.want)) {
			t.Errorf("%s %s = %x (null %v, err %v), want %s", c.typ, c.in, got, null, err, c.want)
		}
	}
}

func TestSequenceVectors(t *testing.T) {
	short, float := mustType(t, "ShortType"), mustType(t, "FloatType")
	types := []*cqltype.Type{short, float}
	for _, c := range []struct {
		kind   clustering.Kind
		values []string // "-" is null
		want   string
	}{
		{clustering.Clustering, []string{"0001", "3F800000"}, "40 8001 40 BF800000 38"},
		{clustering.Clustering, []string{"FFFF", "-"}, "40 7FFF 3E 38"},
		{clustering.InclStartBound, []string{"0000", "FF800000"}, "40 8000 40 007FFFFF 20"},
		{clustering.ExclEndBound, []string{"8000"}, "40 0000 20"},
		{clustering.ExclStartBound, []string{"-"}, "3E 60"},
		{clustering.InclStartBound, nil, "20"},
		{clustering.InclEndBound, nil, "60"},
		{clustering.Clustering, []string{"", "3F800000"}, "3F 40 BF800000 38"},
	} {
		var vals [][]byte
		for _, v := range c.values {
			if v == "-" {
				vals = append(vals, nil)
			} else {
				vals = append(vals, append([]byte{}, unhex(t, v)...))
			}
		}
		got, err := AppendClustering(nil, types, c.kind, vals)
		if err != nil || !bytes.Equal(got, unhex(t, c.want)) {
			t.Errorf("%v %v = %x (%v), want %s", c.kind, c.values, got, err, c.want)
		}
	}
}

func TestVarUintVectors(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want string
	}{
		{0, "00"}, {1, "01"}, {127, "7F"}, {128, "8080"}, {16383, "BFFF"}, {16384, "C04000"},
		{1<<31 - 1, "F07FFFFFFF"}, {1 << 31, "F080000000"}, {1<<56 - 1, "FEFFFFFFFFFFFFFF"},
		{1 << 56, "FF0100000000000000"}, {1<<63 - 1, "FF7FFFFFFFFFFFFFFF"},
	} {
		if got := AppendVarUint(nil, c.v); !bytes.Equal(got, unhex(t, c.want)) {
			t.Errorf("varuint(%d) = %x, want %s", c.v, got, c.want)
		}
		d := decoder{b: unhex(t, c.want)}
		if got, err := d.varUintXor(0); c.v < 1<<63 && (err != nil || got != c.v) {
			t.Errorf("decode varuint %s = %d, %v", c.want, got, err)
		}
	}
}

func TestBigIntTwosComplement(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "127", "128", "-128", "-129", "255", "-256", "65535", "-65536", "340282366920938463463374607431768211456"} {
		x, _ := new(big.Int).SetString(s, 10)
		b := cqltype.VarintBytes(x)
		if fromTwosComplement(b).Cmp(x) != 0 {
			t.Errorf("%s: %x decodes to %s", s, b, fromTwosComplement(b))
		}
		if len(b) > 1 && (b[0] == 0 && b[1]&0x80 == 0 || b[0] == 0xFF && b[1]&0x80 != 0) {
			t.Errorf("%s: %x is not minimal", s, b)
		}
	}
}
