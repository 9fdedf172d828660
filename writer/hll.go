package writer

import (
	"encoding/binary"
	"math/bits"
)

// The cardinality sketch of Statistics.db's compaction component is a
// clearspring HyperLogLogPlus fed with MurmurHash.hash2_64 of each
// partition key (MetadataCollector.addKey). Cassandra starts it sparse and
// switches to the normal register set as it grows; this writer always
// stores the normal form (p = 13), which every reader accepts and which
// estimates the same cardinality within the sketch's error. Hand-written:
// no Go library serializes clearspring's layout.
const (
	hllP  = 13
	hllSP = 25
)

type hllSketch struct{ regs [1 << hllP]uint8 }

func (h *hllSketch) add(key []byte) {
	x := murmur2_64(key, 0)
	idx := x >> (64 - hllP)
	w := x<<hllP | 1<<(hllP-1)
	rho := uint8(bits.LeadingZeros64(w) + 1)
	if rho > h.regs[idx] {
		h.regs[idx] = rho
	}
}

// bytes is HyperLogLogPlus.getBytes for the normal format.
func (h *hllSketch) bytes() []byte {
	words := (len(h.regs) + 5) / 6
	b := binary.BigEndian.AppendUint32(nil, uint32(0xFFFFFFFE)) // version -2
	b = appendVarint(b, hllP)
	b = appendVarint(b, hllSP)
	b = appendVarint(b, 0) // normal format
	b = appendVarint(b, uint64(words*4))
	for w := 0; w < words; w++ {
		var v uint32
		for k := 0; k < 6 && w*6+k < len(h.regs); k++ {
			v |= uint32(h.regs[w*6+k]) << (5 * k)
		}
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// murmur2_64 is Cassandra's MurmurHash.hash2_64 (MurmurHash64A), including
// its sign-extension of the tail bytes.
func murmur2_64(key []byte, seed int64) uint64 {
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
