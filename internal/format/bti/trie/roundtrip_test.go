package trie

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"sort"
	"testing"
)

// u32Codec stores a uint32 payload in four bytes (flags 4), enough for the
// generic trie tests; the BTI indexes have their own codecs.
type u32Codec struct{}

func (u32Codec) Size(uint32) int                    { return 4 }
func (u32Codec) Flags(uint32) uint8                 { return 4 }
func (u32Codec) Append(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

func payloadU32(t testing.TB, n Node) uint32 {
	t.Helper()
	if n.Flags != 4 || len(n.Payload()) < 4 {
		t.Fatalf("node at %d: flags %d, %d payload bytes", n.Pos, n.Flags, len(n.Payload()))
	}
	return binary.BigEndian.Uint32(n.Payload())
}

// randomKeys returns n distinct sorted keys over a small alphabet (so that
// they share prefixes and nodes get many shapes), some of them prefixes of
// others.
func randomKeys(rng *rand.Rand, n, maxLen int, alphabet []byte) [][]byte {
	seen := map[string]bool{}
	var keys [][]byte
	for len(keys) < n {
		l := rng.Intn(maxLen + 1)
		k := make([]byte, l)
		for i := range k {
			k[i] = alphabet[rng.Intn(len(alphabet))]
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	return keys
}

func buildTrie(t testing.TB, keys [][]byte, lead int) ([]byte, int64) {
	t.Helper()
	var buf bytes.Buffer
	buf.Write(make([]byte, lead))
	out := NewOutput(&buf, int64(lead))
	w := NewWriter[uint32](out, u32Codec{})
	for i, k := range keys {
		if err := w.Add(k, uint32(i)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := w.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), root
}

func TestWriterReaderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabets := [][]byte{[]byte("ab"), []byte("abcdefgh"), func() []byte {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}()}
	for _, tc := range []struct{ n, maxLen int }{{1, 3}, {5, 4}, {300, 6}, {5000, 12}, {20000, 20}} {
		for ai, alpha := range alphabets {
			if tc.n > 20 && ai == 0 && tc.maxLen < 10 {
				continue
			}
			keys := randomKeys(rng, tc.n, tc.maxLen, alpha)
			data, root := buildTrie(t, keys, rng.Intn(5000))
			r, err := NewReader(BytesSource(data), root, "mem", "trie")
			if err != nil {
				t.Fatal(err)
			}
			it := r.NewIterator()
			i := 0
			for ok := it.First(); ok; ok = it.Next() {
				if i >= len(keys) || !bytes.Equal(it.Key(), keys[i]) || payloadU32(t, it.Node()) != uint32(i) {
					t.Fatalf("n=%d alpha=%d entry %d: key %x payload, want %x", tc.n, ai, i, it.Key(), keys[i])
				}
				i++
			}
			if it.Err() != nil || i != len(keys) {
				t.Fatalf("n=%d: iterated %d of %d keys, err %v", tc.n, i, len(keys), it.Err())
			}
			for p := 0; p < 200; p++ {
				probe := randomKeys(rng, 1, tc.maxLen+1, alpha)[0]
				if rng.Intn(3) == 0 {
					probe = keys[rng.Intn(len(keys))]
				}
				// floor: greatest key <= probe
				j := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], probe) > 0 }) - 1
				e, ok, err := r.Floor(probe)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (j >= 0) || (ok && (!bytes.Equal(e.Key, keys[j]) || payloadU32(t, e.Node) != uint32(j))) {
					t.Fatalf("Floor(%x) = %x %v, want index %d", probe, e.Key, ok, j)
				}
				// lower: greatest key < probe
				l := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], probe) >= 0 }) - 1
				e, ok, err = r.Lower(probe)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (l >= 0) || (ok && (!bytes.Equal(e.Key, keys[l]) || payloadU32(t, e.Node) != uint32(l))) {
					t.Fatalf("Lower(%x) = %x %v, want index %d", probe, e.Key, ok, l)
				}
				// ceiling: first key >= probe
				c := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], probe) >= 0 })
				ok = it.SeekGE(probe)
				if ok != (c < len(keys)) || (ok && !bytes.Equal(it.Key(), keys[c])) {
					t.Fatalf("SeekGE(%x) = %x %v, want index %d", probe, it.Key(), ok, c)
				}
			}
		}
	}
}
