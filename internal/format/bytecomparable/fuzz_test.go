package bytecomparable

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// fixtureSeeds returns slices of the real Rows.db and Partitions.db, whose
// trie transitions spell byte-comparable keys and separators.
func fixtureSeeds() [][]byte {
	root := fixtures.Root()
	if root == "" {
		return nil
	}
	var out [][]byte
	for _, pat := range []string{"*-Rows.db", "*-Partitions.db"} {
		paths, _ := filepath.Glob(filepath.Join(root, "cassandra", "da", "*", pat))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			for i := 0; i+8 <= len(b); i += 16 {
				out = append(out, b[i:i+8])
			}
		}
	}
	return out
}

var fuzzTypes = append(propertyTypes,
	"CompositeType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.Int32Type)",
	"org.apache.cassandra.db.marshal.LexicalUUIDType",
	"org.apache.cassandra.db.marshal.DateType",
	"VectorType(org.apache.cassandra.db.marshal.FloatType,2)",
	"VectorType(org.apache.cassandra.db.marshal.UTF8Type,2)",
)

func fuzzType(t *testing.T, sel uint8) *cqltype.Type {
	return mustType(t, fuzzTypes[int(sel)%len(fuzzTypes)])
}

// FuzzDecodeValue decodes arbitrary bytes as one value of a type picked by
// sel; whatever decodes must encode and decode again to an equal value.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range fixtureSeeds() {
		f.Add(s, uint8(1))
	}
	f.Add([]byte{0xC1, 0x01, 0x81, 0x8A, 0x00}, uint8(15))
	f.Add([]byte{0xFF, 0x7A, 0x01, 0x00}, uint8(14))
	f.Fuzz(func(t *testing.T, b []byte, sel uint8) {
		ty := fuzzType(t, sel)
		v, err := DecodeValue(b, ty)
		if err != nil {
			return
		}
		e, null, err := AppendValue(nil, ty, v)
		if err != nil {
			t.Fatalf("%s: %x decodes to %x, which does not encode: %v", ty, b, v, err)
		}
		if null {
			return
		}
		v2, err := DecodeValue(e, ty)
		if err != nil || ty.Compare(v, v2) != 0 {
			t.Fatalf("%s: %x -> %x -> %x -> %x (%v)", ty, b, v, e, v2, err)
		}
	})
}

// FuzzDecodeClustering decodes arbitrary bytes as a clustering prefix or
// separator over two columns of types picked by sel.
func FuzzDecodeClustering(f *testing.F) {
	for _, s := range fixtureSeeds() {
		f.Add(s, uint8(1), uint8(1))
	}
	f.Add([]byte{0x40, 0x31, 0x32, 0x00, 0x40, 0x80, 0x00, 0x00, 0x01, 0x38}, uint8(1), uint8(7))
	f.Fuzz(func(t *testing.T, b []byte, s1, s2 uint8) {
		types := []*cqltype.Type{fuzzType(t, s1), fuzzType(t, s2)}
		dc, err := DecodeClustering(b, types)
		if err != nil || dc.Position == Partial || dc.LastPartial {
			return
		}
		for i, v := range dc.Values {
			if v == nil {
				continue
			}
			if _, _, err := AppendValue(nil, types[i], v); err != nil {
				t.Fatalf("decoded value %x of %s does not encode: %v", v, types[i], err)
			}
		}
	})
}

// FuzzDecodeDecoratedKey decodes arbitrary bytes as a decorated key; a key
// that decodes encodes back to the same bytes.
func FuzzDecodeDecoratedKey(f *testing.F) {
	for _, s := range fixtureSeeds() {
		f.Add(s, uint8(2))
	}
	f.Add([]byte{0x40, '0', 0, 0x40, '0', 0, 0x38}, uint8(2))
	parts := []token.Partitioner{token.Murmur3, token.Random, token.ByteOrdered}
	f.Fuzz(func(t *testing.T, b []byte, sel uint8) {
		p := parts[int(sel)%len(parts)]
		key, err := DecodeDecoratedKey(b, p)
		if err != nil {
			return
		}
		e, err := DecoratedKey(p, key)
		if err != nil || string(e) != string(b) {
			t.Fatalf("%s: %x decodes to key %x, which encodes as %x (%v)", p.Name(), b, key, e, err)
		}
	})
}
