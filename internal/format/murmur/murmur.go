// Package murmur computes MurmurHash3 x64_128 exactly as Cassandra's
// utils/MurmurHash.hash3_x64_128 does. Murmur3Partitioner takes its tokens
// from it and every Filter.db (whatever the partitioner) is indexed by it.
//
// It is hand-written rather than taken from a library (spaolacci/murmur3,
// twmb/murmur3) on purpose: Cassandra reads the 1..15 trailing bytes as
// signed Java bytes, so a tail byte >= 0x80 is sign-extended before it is
// shifted into place and sets every higher bit of the tail word. Standard
// Murmur3 zero-extends, so those libraries give other tokens for such keys.
package murmur

import (
	"encoding/binary"
	"math/bits"
)

const (
	c1 = 0x87c37b91114253d5
	c2 = 0x4cf5ad432745937f
)

// Hash128 returns the two 64-bit halves Cassandra calls result[0] and
// result[1]. Cassandra always uses seed 0 for tokens and bloom filters.
func Hash128(key []byte, seed int64) (h1, h2 uint64) {
	h1, h2 = uint64(seed), uint64(seed)
	n := len(key)
	body := n &^ 15
	for i := 0; i < body; i += 16 {
		k1 := binary.LittleEndian.Uint64(key[i:])
		k2 := binary.LittleEndian.Uint64(key[i+8:])

		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729

		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}

	tail := key[body:]
	// signed widens a byte the way Java's (long) cast of a byte does.
	signed := func(b byte) uint64 { return uint64(int64(int8(b))) }
	var k1, k2 uint64
	if len(tail) > 8 {
		for i := len(tail) - 1; i >= 8; i-- {
			k2 ^= signed(tail[i]) << (8 * uint(i-8))
		}
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
	}
	if len(tail) > 0 {
		for i := min(len(tail), 8) - 1; i >= 0; i-- {
			k1 ^= signed(tail[i]) << (8 * uint(i))
		}
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}

	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix(h1)
	h2 = fmix(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// Hash2_64 is Cassandra's MurmurHash.hash2_64 (MurmurHash64A), including
// its sign-extension of the tail bytes. It feeds the cardinality sketch
// of Statistics.db (MetadataCollector.addKey).
func Hash2_64(key []byte, seed int64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	n := len(key)
	h := uint64(seed&0xffffffff) ^ (m * uint64(n))
	for i := 0; i+8 <= n; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := key[n&^7:]
	if rem := len(tail); rem > 0 {
		for i := rem - 1; i >= 0; i-- {
			h ^= uint64(int64(int8(tail[i]))) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}
