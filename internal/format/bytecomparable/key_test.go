package bytecomparable

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/sstabletool/sstabletool/format/token"
)

// TestDecoratedKeyOrder checks that decorated keys order as the
// partitioner orders them (token, then key bytes) and decode back.
func TestDecoratedKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, p := range []token.Partitioner{token.Murmur3, token.Random, token.ByteOrdered} {
		var keys [][]byte
		keys = append(keys, []byte{}, []byte{0}, []byte{0, 0}, []byte{0xFF})
		for len(keys) < 300 {
			k := make([]byte, rng.Intn(5))
			for i := range k {
				k[i] = []byte{0, 1, 0x7F, 0x80, 0xFF, byte(rng.Intn(256))}[rng.Intn(6)]
			}
			keys = append(keys, k)
		}
		encs := make([][]byte, len(keys))
		for i, k := range keys {
			e, err := DecoratedKey(p, k)
			if err != nil {
				t.Fatal(err)
			}
			encs[i] = e
			back, err := DecodeDecoratedKey(e, p)
			if err != nil || !bytes.Equal(back, k) {
				t.Fatalf("%s: key %x encodes as %x, decodes to %x (%v)", p.Name(), k, e, back, err)
			}
		}
		for i := range keys {
			for j := range keys {
				if want, got := sign(p.CompareKeys(keys[i], keys[j])), sign(bytes.Compare(encs[i], encs[j])); got != want {
					t.Fatalf("%s: keys %x, %x: partitioner %d, bytes %d (%x vs %x)", p.Name(), keys[i], keys[j], want, got, encs[i], encs[j])
				}
			}
		}
	}
}

func TestDecoratedKeyByteOrdered(t *testing.T) {
	// ByteOrderedPartitioner's token is the key, so the key appears twice.
	e, err := DecoratedKey(token.ByteOrdered, []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x40, '0', 0, 0x40, '0', 0, 0x38}; !bytes.Equal(e, want) {
		t.Fatalf("got %x, want %x", e, want)
	}
	// Murmur3: the long token with its sign flipped.
	e, _ = DecoratedKey(token.Murmur3, []byte{})
	if want := []byte{0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0x38}; !bytes.Equal(e, want) {
		t.Fatalf("empty murmur3 key: got %x, want %x", e, want)
	}
	if _, err := DecodeDecoratedKey([]byte{0x40, '1', 0, 0x40, '0', 0, 0x38}, token.ByteOrdered); err == nil {
		t.Fatal("a token that does not match the key decoded")
	}
}
