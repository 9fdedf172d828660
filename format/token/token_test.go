package token

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixturekeys"
	"github.com/sstabletool/sstabletool/internal/format/murmur"
)

func TestForName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Partitioner
	}{
		{"org.apache.cassandra.dht.Murmur3Partitioner", Murmur3},
		{"Murmur3Partitioner", Murmur3},
		{"org.apache.cassandra.dht.RandomPartitioner", Random},
		{"org.apache.cassandra.dht.ByteOrderedPartitioner", ByteOrdered},
		{"org.apache.cassandra.dht.OrderPreservingPartitioner", OrderPreserving},
	} {
		p, err := ForName(tc.name)
		if err != nil || p != tc.want {
			t.Errorf("ForName(%q) = %v, %v", tc.name, p, err)
		}
	}
	for _, bad := range []string{"org.apache.cassandra.dht.LocalPartitioner", "com.example.Mine", ""} {
		if _, err := ForName(bad); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("ForName(%q) error = %v, want a not-supported error", bad, err)
		}
	}
}

// Murmur3 tokens of 4-byte CQL int keys; token(0) and token(1) are the
// values every Cassandra user sees from SELECT token(k).
func TestMurmur3Tokens(t *testing.T) {
	for _, tc := range []struct {
		key  []byte
		want string
	}{
		{[]byte{0, 0, 0, 0}, "-3485513579396041028"},
		{[]byte{0, 0, 0, 1}, "-4069959284402364209"},
		{[]byte("123"), "-7468325962851647638"},
		{nil, "-9223372036854775808"}, // empty key: the minimum token
	} {
		if got := Murmur3.Token(tc.key).String(); got != tc.want {
			t.Errorf("Murmur3.Token(%x) = %s, want %s", tc.key, got, tc.want)
		}
	}
}

// A key whose hash's first long is Long.MIN_VALUE must get Long.MAX_VALUE,
// because MIN_VALUE is reserved for the minimum token. The key is built by
// running the hash backwards (as Murmur3Partitioner.keyForToken does) and
// the test first checks the hash really is MIN_VALUE.
func TestMurmur3MinValueMapsToMaxValue(t *testing.T) {
	key := keyForHash(math.MinInt64)
	if h1, _ := murmur.Hash128(key, 0); int64(h1) != math.MinInt64 {
		t.Fatalf("test key %x hashes to %d, not Long.MIN_VALUE", key, int64(h1))
	}
	if got := Murmur3.Token(key).Int64(); got != math.MaxInt64 {
		t.Errorf("token = %d, want Long.MAX_VALUE", got)
	}
}

// keyForHash returns a 16-byte key whose hash3_x64_128 is (h1, 0).
func keyForHash(h1 int64) []byte {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	r0, r1 := uint64(h1), uint64(0)
	// undo the last two additions and fmix
	b := r1 - r0
	a := r0 - b
	a, b = invFmix(a), invFmix(b)
	// undo "h1 += h2; h2 += h1" and the xor with the length
	h2 := b - a
	h1u := a - h2
	h1u ^= 16
	h2 ^= 16
	// undo the single body round (seed 0, so h1 and h2 start at 0)
	inv5 := inverse(5)
	x2 := bits.RotateLeft64((h2-0x38495ab5)*inv5-h1u, -31)
	x1 := bits.RotateLeft64((h1u-0x52dce729)*inv5, -27)
	k2 := bits.RotateLeft64(x2*inverse(c1), -33) * inverse(c2)
	k1 := bits.RotateLeft64(x1*inverse(c2), -31) * inverse(c1)
	key := make([]byte, 16)
	binary.LittleEndian.PutUint64(key, k1)
	binary.LittleEndian.PutUint64(key[8:], k2)
	return key
}

func invFmix(k uint64) uint64 {
	// x ^= x>>33 is its own inverse for 64-bit words.
	k ^= k >> 33
	k *= inverse(0xc4ceb9fe1a85ec53)
	k ^= k >> 33
	k *= inverse(0xff51afd7ed558ccd)
	k ^= k >> 33
	return k
}

// inverse is the multiplicative inverse of an odd number mod 2^64.
func inverse(c uint64) uint64 {
	x := c
	for range 6 {
		x *= 2 - c*x
	}
	return x
}

// RandomPartitioner vectors: new BigInteger(MD5(key)).abs() computed with
// the JDK's MessageDigest and BigInteger. Most digests here have the sign
// bit set, so the two's complement negation is exercised.
func TestRandomTokens(t *testing.T) {
	for _, tc := range []struct {
		key  []byte
		want string
	}{
		{[]byte("a"), "16955237001963240173058271559858726497"},
		{[]byte("0"), "64067091395865220333931589265234893606"},
		{[]byte("1"), "78703492656118554854272571946195123045"},
		{[]byte("hello"), "123957004363873451094272536567338222994"},
		{[]byte("key-42"), "78725450077596987813915448678445452085"},
		{[]byte("été"), "44282947547735391734198087381078419246"},
		{[]byte{0, 0, 0, 1}, "19580090105725936846312850328329299579"},
		{[]byte{0xff, 0xfe}, "16353970376846331408141568155631838824"},
		{nil, "-1"},
	} {
		tok := Random.Token(tc.key)
		if got := tok.String(); got != tc.want {
			t.Errorf("Random.Token(%q) = %s, want %s", tc.key, got, tc.want)
		}
		back, err := Random.ParseToken(tc.want)
		if err != nil || !back.Equal(tok) {
			t.Errorf("ParseToken(%s) = %v, %v", tc.want, back, err)
		}
	}
	if _, err := Random.ParseToken("170141183460469231731687303715884105729"); err == nil {
		t.Error("2^127+1 parsed as a RandomPartitioner token")
	}
	min := Random.MinimumToken()
	if Random.Compare(min, Random.Token([]byte("a"))) >= 0 || Random.Compare(Random.Token([]byte("a")), min) <= 0 {
		t.Error("the minimum Random token does not sort first")
	}
	if Random.Compare(Random.Token([]byte("a")), Random.Token([]byte("hello"))) >= 0 {
		t.Error("Random tokens do not order numerically")
	}
}

func TestByteOrdered(t *testing.T) {
	tok := ByteOrdered.Token([]byte{0x00, 0xab, 0x7f})
	if tok.String() != "00ab7f" {
		t.Errorf("String = %s", tok.String())
	}
	back, err := ByteOrdered.ParseToken("00ab7f")
	if err != nil || !back.Equal(tok) {
		t.Errorf("ParseToken = %v, %v", back, err)
	}
	if ByteOrdered.CompareKeys([]byte{0x01}, []byte{0x80}) >= 0 {
		t.Error("bytes are not compared unsigned")
	}
	if ByteOrdered.CompareKeys([]byte("ab"), []byte("abc")) >= 0 {
		t.Error("a prefix does not sort first")
	}
}

// OrderPreserving tokens compare as Java strings (UTF-16 code units). The
// expected signs were checked with the JDK: "\uFFFD".compareTo("😀") > 0,
// "\uE000".compareTo("😀") > 0, "\uD7FF".compareTo("😀") < 0, although in
// UTF-8 byte order 😀 sorts after all three.
func TestOrderPreservingIsJavaStringOrder(t *testing.T) {
	emoji := []byte("\U0001F600")
	for _, tc := range []struct {
		a    string
		sign int
	}{{"\uFFFD", 1}, {"\uE000", 1}, {"\uD7FF", -1}} {
		got := OrderPreserving.CompareKeys([]byte(tc.a), emoji)
		if (got > 0) != (tc.sign > 0) || got == 0 {
			t.Errorf("compare(%q, 😀) = %d, want sign %d", tc.a, got, tc.sign)
		}
	}
	if OrderPreserving.CompareKeys([]byte("\U0001F600"), []byte("\U0001F601")) >= 0 {
		t.Error("supplementary characters with the same lead surrogate misorder")
	}
	// Invalid UTF-8 becomes its hex text, as ByteBufferUtil.bytesToHex does.
	if got := OrderPreserving.Token([]byte{0xff, 0x10}).String(); got != "ff10" {
		t.Errorf("token of invalid UTF-8 = %q, want ff10", got)
	}
}

// Every fixture's Index.db lists partitions in its partitioner's order,
// strictly increasing; that holds only if tokens are computed as Cassandra
// computed them (me-collections are Murmur3, legacy tables ByteOrdered).
func TestFixtureIndexOrder(t *testing.T) {
	sawMurmur := false
	for _, tb := range fixturekeys.All(t) {
		p, err := ForName(tb.Partitioner)
		if err != nil {
			t.Fatalf("%s: %v", tb.Name, err)
		}
		sawMurmur = sawMurmur || p == Murmur3
		for i := 1; i < len(tb.Keys); i++ {
			if p.CompareKeys(tb.Keys[i-1], tb.Keys[i]) >= 0 {
				t.Errorf("%s: key %x (token %s) does not sort before key %x (token %s)",
					tb.Name, tb.Keys[i-1], p.Token(tb.Keys[i-1]), tb.Keys[i], p.Token(tb.Keys[i]))
			}
		}
		if p == Murmur3 && len(tb.Keys) > 2 {
			// Byte order would be a different order for these int keys.
			sorted := true
			for i := 1; i < len(tb.Keys); i++ {
				sorted = sorted && string(tb.Keys[i-1]) < string(tb.Keys[i])
			}
			if sorted {
				t.Errorf("%s: keys are in byte order; the fixture cannot tell partitioners apart", tb.Name)
			}
		}
	}
	if !sawMurmur {
		t.Error("no Murmur3 fixture found")
	}
}

func TestTokenDoesNotAllocate(t *testing.T) {
	key := []byte("some partition key")
	for _, p := range []Partitioner{Murmur3, Random, ByteOrdered} {
		if n := testing.AllocsPerRun(100, func() { p.Token(key) }); n != 0 {
			t.Errorf("%s: %v allocations per token", p.Name(), n)
		}
	}
}

func TestBytesTokenAliasesUntilCloned(t *testing.T) {
	key := []byte{1, 2, 3}
	tok := ByteOrdered.Token(key)
	clone := tok.Clone()
	key[0] = 9
	if tok.String() != "090203" || clone.String() != "010203" {
		t.Errorf("token %s, clone %s; want 090203 (aliases the key) and 010203", tok, clone)
	}
	if Murmur3.Token(key).Bytes() != nil {
		t.Error("a Murmur3 token has bytes")
	}
}

// ParseToken reads what String prints, for every partitioner, and never
// panics on other input.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"-4069959284402364209", "170141183460469231731687303715884105728", "-1", "00ab", "text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []Partitioner{Murmur3, Random, ByteOrdered, OrderPreserving} {
			tok, err := p.ParseToken(s)
			if err != nil {
				continue
			}
			again, err := p.ParseToken(tok.String())
			if err != nil || !again.Equal(tok) {
				t.Fatalf("%s: %q -> %s -> %v, %v", p.Name(), s, tok, again, err)
			}
		}
	})
}
