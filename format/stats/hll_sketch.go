package stats

import (
	"encoding/binary"
	"math/bits"

	"github.com/sstabletool/sstabletool/internal/format/murmur"
)

// HLLSketch builds the cardinality sketch of Statistics.db's compaction
// component, the encoding HLLCardinality reads: a clearspring
// HyperLogLogPlus fed with MurmurHash.hash2_64 of each partition key
// (MetadataCollector.addKey). Cassandra starts it sparse and
// switches to the normal register set as it grows; this writer always
// stores the normal form (p = 13), which every reader accepts and which
// estimates the same cardinality within the sketch's error. Hand-written:
// no Go library serializes clearspring's layout.
const (
	hllP  = 13
	hllSP = 25
)

type HLLSketch struct{ regs [1 << hllP]uint8 }

// Add counts one partition key.
func (h *HLLSketch) Add(key []byte) {
	x := murmur.Hash2_64(key, 0)
	idx := x >> (64 - hllP)
	w := x<<hllP | 1<<(hllP-1)
	rho := uint8(bits.LeadingZeros64(w) + 1)
	if rho > h.regs[idx] {
		h.regs[idx] = rho
	}
}

// Bytes is HyperLogLogPlus.getBytes for the normal format.
func (h *HLLSketch) Bytes() []byte {
	words := (len(h.regs) + 5) / 6
	b := binary.BigEndian.AppendUint32(nil, uint32(0xFFFFFFFE)) // version -2
	b = binary.AppendUvarint(b, hllP)
	b = binary.AppendUvarint(b, hllSP)
	b = binary.AppendUvarint(b, 0) // normal format
	b = binary.AppendUvarint(b, uint64(words*4))
	for w := 0; w < words; w++ {
		var v uint32
		for k := 0; k < 6 && w*6+k < len(h.regs); k++ {
			v |= uint32(h.regs[w*6+k]) << (5 * k)
		}
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}
