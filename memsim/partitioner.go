package memsim

import (
	"encoding/binary"
	"strings"

	"github.com/sstabletool/sstabletool/format/token"
)

// Partitioner names which of format/token's partitioners the memtables
// order by; the small enum keeps the hot path free of interface calls, and
// Token gives the format/token partitioner that defines it.
type Partitioner int

const (
	Murmur3     Partitioner = iota // dht/Murmur3Partitioner.java: LongToken of MurmurHash3
	ByteOrdered                    // dht/ByteOrderedPartitioner.java: the key bytes are the token
)

// PartitionerFor is the memtables' partitioner for one of format/token's,
// false when memsim does not model it.
func PartitionerFor(p token.Partitioner) (Partitioner, bool) {
	switch p.Name() {
	case token.Murmur3.Name():
		return Murmur3, true
	case token.ByteOrdered.Name():
		return ByteOrdered, true
	}
	return Murmur3, false
}

// Token is the format/token partitioner p stands for.
func (p Partitioner) Token() token.Partitioner {
	if p == ByteOrdered {
		return token.ByteOrdered
	}
	return token.Murmur3
}

// orderToken maps a key to a uint64 whose unsigned order is the token
// order: Murmur3's long token (format/token computes it) with its sign bit
// flipped (which is also its 8-byte byte-comparable form), or
// ByteOrdered's first 8 key bytes. Ties are broken by the key bytes, as
// DecoratedKey.compareTo does.
func (p Partitioner) orderToken(key []byte) uint64 {
	if p == ByteOrdered {
		var b [8]byte
		copy(b[:], key)
		return binary.BigEndian.Uint64(b[:])
	}
	return uint64(token.Murmur3.Token(key).Int64()) ^ 1<<63
}

func (p Partitioner) String() string {
	n := p.Token().Name()
	return n[strings.LastIndexByte(n, '.')+1:]
}
