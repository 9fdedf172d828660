package token

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sstabletool/sstabletool/internal/format/murmur"
)

// Partitioner maps partition keys to tokens and orders keys by token.
type Partitioner interface {
	// Name is the full Java class name, as Statistics.db stores it.
	Name() string
	// Token computes the token of a partition key. It does not allocate
	// for Murmur3 and Random; Bytes and String tokens refer to key.
	Token(key []byte) Token
	// Compare orders two tokens of this partitioner.
	Compare(a, b Token) int
	// CompareKeys orders partition keys as sstables store them
	// (DecoratedKey.compareTo): by token, then by unsigned key bytes.
	CompareKeys(a, b []byte) int
	// MinimumToken is the token before every other (an empty key's token).
	MinimumToken() Token
	// ParseToken reads a token printed by Token.String.
	ParseToken(s string) (Token, error)
	// PreservesOrder is true when token order is key order.
	PreservesOrder() bool
}

const dhtPackage = "org.apache.cassandra.dht."

// The partitioners ForName knows.
var (
	Murmur3         Partitioner = murmur3Partitioner{}
	Random          Partitioner = randomPartitioner{}
	ByteOrdered     Partitioner = byteOrderedPartitioner{}
	OrderPreserving Partitioner = orderPreservingPartitioner{}
)

// ForName returns the partitioner a Java class name denotes. Like
// Cassandra, a name without a package is looked up in
// org.apache.cassandra.dht.
func ForName(class string) (Partitioner, error) {
	full := class
	if !strings.Contains(full, ".") {
		full = dhtPackage + full
	}
	for _, p := range []Partitioner{Murmur3, Random, ByteOrdered, OrderPreserving} {
		if p.Name() == full {
			return p, nil
		}
	}
	if strings.HasPrefix(full, dhtPackage+"LocalPartitioner") {
		return nil, fmt.Errorf("partitioner %q is not supported: LocalPartitioner orders keys by the partition key's CQL type and is only used by system tables", class)
	}
	return nil, fmt.Errorf("partitioner %q is not supported: expected one of Murmur3Partitioner, RandomPartitioner, ByteOrderedPartitioner, OrderPreservingPartitioner", class)
}

// compareKeys is DecoratedKey.compareTo given a token function.
func compareKeys(p Partitioner, a, b []byte) int {
	return CompareDecorated(p.Token(a), a, p.Token(b), b)
}

// CompareDecorated is DecoratedKey.compareTo of key a with token ta and
// key b with token tb: by token, then by the key's bytes. A walk that
// compares each key with the one before takes each key's token once.
func CompareDecorated(ta Token, a []byte, tb Token, b []byte) int {
	if c := ta.Compare(tb); c != 0 {
		return c
	}
	return bytes.Compare(a, b)
}

// Murmur3Partitioner: the token is the first half of Cassandra's
// MurmurHash3 x64_128 of the key, with Long.MIN_VALUE (reserved for the
// minimum token, i.e. the empty key) moved to Long.MAX_VALUE.
type murmur3Partitioner struct{}

func (murmur3Partitioner) Name() string           { return dhtPackage + "Murmur3Partitioner" }
func (murmur3Partitioner) PreservesOrder() bool   { return false }
func (murmur3Partitioner) Compare(a, b Token) int { return a.Compare(b) }
func (murmur3Partitioner) MinimumToken() Token    { return Murmur3Token(math.MinInt64) }

func (murmur3Partitioner) Token(key []byte) Token {
	if len(key) == 0 {
		return Murmur3Token(math.MinInt64)
	}
	h1, _ := murmur.Hash128(key, 0)
	v := int64(h1)
	if v == math.MinInt64 {
		v = math.MaxInt64
	}
	return Murmur3Token(v)
}

func (p murmur3Partitioner) CompareKeys(a, b []byte) int { return compareKeys(p, a, b) }

func (murmur3Partitioner) ParseToken(s string) (Token, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return Token{}, fmt.Errorf("murmur3 token %q: expected a signed 64-bit decimal: %w", s, err)
	}
	return Murmur3Token(v), nil
}

// RandomPartitioner: the token is the absolute value of the key's MD5
// digest read as a signed 128-bit big-endian integer (Java BigInteger).
type randomPartitioner struct{}

func (randomPartitioner) Name() string           { return dhtPackage + "RandomPartitioner" }
func (randomPartitioner) PreservesOrder() bool   { return false }
func (randomPartitioner) Compare(a, b Token) int { return a.Compare(b) }
func (randomPartitioner) MinimumToken() Token {
	return Token{kind: KindRandom, hi: randomMinimum, lo: randomMinimum}
}

func (randomPartitioner) Token(key []byte) Token {
	if len(key) == 0 {
		return Token{kind: KindRandom, hi: randomMinimum, lo: randomMinimum}
	}
	sum := md5.Sum(key)
	hi, lo := binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:])
	if int64(hi) < 0 { // two's complement negate: the magnitude
		hi, lo = ^hi, ^lo
		lo++
		if lo == 0 {
			hi++
		}
	}
	return Token{kind: KindRandom, hi: hi, lo: lo}
}

func (p randomPartitioner) CompareKeys(a, b []byte) int { return compareKeys(p, a, b) }

func (randomPartitioner) ParseToken(s string) (Token, error) {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return Token{}, fmt.Errorf("random partitioner token %q: expected a decimal integer", s)
	}
	t, ok := RandomToken(v)
	if !ok {
		return Token{}, fmt.Errorf("random partitioner token %s: expected -1 or 0..2^127", s)
	}
	return t, nil
}

// ByteOrderedPartitioner: the token is the key; order is unsigned bytes.
type byteOrderedPartitioner struct{}

func (byteOrderedPartitioner) Name() string                { return dhtPackage + "ByteOrderedPartitioner" }
func (byteOrderedPartitioner) PreservesOrder() bool        { return true }
func (byteOrderedPartitioner) Compare(a, b Token) int      { return a.Compare(b) }
func (byteOrderedPartitioner) MinimumToken() Token         { return BytesToken(nil) }
func (byteOrderedPartitioner) Token(key []byte) Token      { return BytesToken(key) }
func (byteOrderedPartitioner) CompareKeys(a, b []byte) int { return bytes.Compare(a, b) }

func (byteOrderedPartitioner) ParseToken(s string) (Token, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return Token{}, fmt.Errorf("byte-ordered token %q: expected hex: %w", s, err)
	}
	return BytesToken(b), nil
}

// OrderPreservingPartitioner: the token is the key decoded as UTF-8 (or,
// when that fails, the key's lowercase hex), ordered as Java strings.
type orderPreservingPartitioner struct{}

func (orderPreservingPartitioner) Name() string           { return dhtPackage + "OrderPreservingPartitioner" }
func (orderPreservingPartitioner) PreservesOrder() bool   { return true }
func (orderPreservingPartitioner) Compare(a, b Token) int { return a.Compare(b) }
func (orderPreservingPartitioner) MinimumToken() Token    { return Token{kind: KindString} }

func (orderPreservingPartitioner) Token(key []byte) Token {
	if utf8.Valid(key) {
		return bytesKind(KindString, key)
	}
	return bytesKind(KindString, []byte(hex.EncodeToString(key)))
}

func (p orderPreservingPartitioner) CompareKeys(a, b []byte) int { return compareKeys(p, a, b) }

func (orderPreservingPartitioner) ParseToken(s string) (Token, error) {
	if !utf8.ValidString(s) {
		return Token{}, fmt.Errorf("order-preserving token %q: expected UTF-8 text", s)
	}
	return StringToken(s), nil
}
