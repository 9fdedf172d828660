package bytecomparable

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format/token"
)

// AppendToken appends a token's byte-comparable form (Token.asComparableBytes):
// a Murmur3 token as its long with the sign flipped, a RandomPartitioner
// token as a varint, ByteOrdered and OrderPreserving tokens as escaped
// bytes (the key's bytes, or the string's UTF-8).
func AppendToken(dst []byte, t token.Token) ([]byte, error) {
	switch t.Kind() {
	case token.KindMurmur3:
		return AppendInt64(dst, t.Int64()), nil
	case token.KindRandom:
		return AppendBigInt(dst, t.BigInt()), nil
	case token.KindBytes, token.KindString:
		return AppendEscaped(dst, t.Bytes()), nil
	}
	return dst, fmt.Errorf("bytecomparable: no byte-comparable form for a token of kind %d", t.Kind())
}

// AppendDecoratedKey appends the byte-comparable form of a partition key as
// the partitioner decorates it (DecoratedKey.asComparableBytes): the token
// and the key's serialized bytes as two components, then the terminator.
// The key is escaped as raw bytes whatever its CQL type; a composite key
// is its CompositeType serialization.
func AppendDecoratedKey(dst []byte, p token.Partitioner, key []byte) ([]byte, error) {
	dst = append(dst, NextComponent)
	dst, err := AppendToken(dst, p.Token(key))
	if err != nil {
		return dst, err
	}
	dst = append(dst, NextComponent)
	dst = AppendEscaped(dst, key)
	return append(dst, Terminator), nil
}

// DecoratedKey returns the byte-comparable form of a partition key.
func DecoratedKey(p token.Partitioner, key []byte) ([]byte, error) {
	return AppendDecoratedKey(make([]byte, 0, 2*len(key)+16), p, key)
}

// DecodeDecoratedKey decodes a whole byte-comparable decorated key and
// returns the partition key's bytes. It checks that the token is the one
// the partitioner gives the key.
func DecodeDecoratedKey(b []byte, p token.Partitioner) ([]byte, error) {
	d := decoder{b: b}
	if err := d.expect(NextComponent, "the token's component separator"); err != nil {
		return nil, err
	}
	start := d.pos
	var err error
	switch p.MinimumToken().Kind() {
	case token.KindMurmur3:
		_, err = d.take(8, "an 8-byte Murmur3 token")
	case token.KindRandom:
		_, err = d.integer()
	default:
		_, err = d.unescape()
	}
	if err != nil {
		return nil, err
	}
	// Compared as stored: a token in a non-canonical form is corrupt too.
	tok := b[start:d.pos]
	if err := d.expect(NextComponent, "the key's component separator"); err != nil {
		return nil, err
	}
	key, err := d.unescape()
	if err != nil {
		return nil, err
	}
	if err := d.expect(Terminator, "the decorated key's terminator 0x38"); err != nil {
		return nil, err
	}
	if d.pos != len(b) {
		return nil, d.errorf("the end of the decorated key, found %d more bytes", len(b)-d.pos)
	}
	want, err := AppendToken(nil, p.Token(key))
	if err != nil {
		return nil, err
	}
	if string(want) != string(tok) {
		return nil, d.errorf("a token matching the key (%s gives %x, the encoding has %x)", p.Name(), want, tok)
	}
	return key, nil
}
