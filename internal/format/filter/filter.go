// Package filter reads, writes and builds Filter.db, the partition-key
// bloom filter of a big-format sstable (utils/BloomFilter.java,
// BloomFilterSerializer.java, FilterFactory.java, BloomCalculations.java,
// obs/OffHeapBitSet.java).
//
// Layout: int hash count, int number of 64-bit words, then the words. The
// bit for index i is bit i&7 of byte i>>3 of the bitset. From version na on
// the bytes are stored in that order; before na (CASSANDRA-9067) each
// 8-byte word was written as a big-endian long whose least significant
// byte is the bitset's first byte, i.e. every 8 bytes reversed.
//
// Indexes come from MurmurHash3 x64_128 (Cassandra's variant) of the
// partition key, whatever the partitioner: with h = hash(key), index j is
// |(h[1] + j*h[0]) mod capacity| using Java's signed long arithmetic.
//
// It is hand-written because no bloom filter library reproduces these
// bytes: the hash variant, the index derivation and the sizing table all
// have to match Cassandra exactly for a written Filter.db to be readable.
package filter

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/internal/format/murmur"
	"github.com/sstabletool/sstabletool/reader"
)

const component = "Filter.db"

// maxHashCount is the size of the index array BloomFilter reuses per
// thread; a filter with more hashes cannot be queried by Cassandra.
const maxHashCount = 21

// BloomFilter is a decoded or freshly built Filter.db.
type BloomFilter struct {
	hashCount     int
	bits          []byte // bitset in memory order
	alwaysPresent bool
	// pending are the hashes of keys added whose bits are not set yet:
	// Add sets them addBatch keys at a time (settle), every read of the
	// bits first (a filter set by region keeps indexes in idx instead).
	// A decoded filter never has any, so its reads write nothing and may
	// run on several goroutines at once.
	pending [][2]uint64
	idx     []int64  // settle's bit indexes; a filter set by region's pending ones
	local   []uint32 // settleByRegion's indexes grouped by region, reused
	ends    []int    // settleByRegion's region bounds in local, reused
}

// addBatch is how many keys Add hashes before it sets their bits. A
// filter of a few million keys is bigger than the caches, so every bit
// set is a cache miss (and in a virtual machine often a TLB miss too,
// hundreds of nanoseconds each). Set key by key, between the hashing and
// index arithmetic of each key, they wait one after the other; set in one
// tight loop after the indexes of many keys are computed, they overlap:
// on the 2-core VM of docs/performance.md a key of a 15-million-key filter
// took about 900 ns one by one and takes about 100 ns in batches.
const addBatch = 64

// A filter bigger than regionFilterBytes sets its bits region by region
// (settleByRegion), a region being 2^regionShift bits (256 KiB, within the
// L2 cache, its pages within the TLB). Add keeps such a filter's bit
// indexes, not its hashes, and sets them once they number four per cache
// line of the bitset: the lines are then fetched once a batch for about
// four bits each, where set one by one (or 64 keys at a time) each bit
// costs a fetch. The batch takes 12 bytes an index, three quarters of the
// bitset's size (13 MB beside a 17 MB filter of 15 million keys).
const (
	regionFilterBytes = 4 << 20
	regionShift       = 21
)

// byRegion reports whether the filter's bits are set region by region.
func (f *BloomFilter) byRegion() bool { return len(f.bits) > regionFilterBytes }

// AlwaysPresent is the filter Cassandra uses when bloom_filter_fp_chance is
// 1.0: it claims every key and serializes to nothing (an empty Filter.db).
func AlwaysPresent() *BloomFilter { return &BloomFilter{alwaysPresent: true} }

// HashCount is the number of bit indexes per key.
func (f *BloomFilter) HashCount() int { return f.hashCount }

// Capacity is the number of bits, always a multiple of 64.
func (f *BloomFilter) Capacity() int64 { return int64(len(f.bits)) * 8 }

// IsAlwaysPresent reports whether this is the no-op filter of an empty Filter.db.
func (f *BloomFilter) IsAlwaysPresent() bool { return f.alwaysPresent }

// ReadFile reads and decodes a Filter.db, naming the file in errors.
func ReadFile(path string, oldFormat bool) (*BloomFilter, error) {
	b, err := reader.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading bloom filter: %w", err)
	}
	f, err := Decode(b, oldFormat)
	return f, corrupt.WithFile(err, path)
}

// Decode parses Filter.db bytes. oldFormat is true for versions before na
// (Version.HasOldBloomFilterFormat). An empty input is the always-present
// filter, as Cassandra reads it. The bitset is copied, so b may be reused.
func Decode(b []byte, oldFormat bool) (*BloomFilter, error) {
	if len(b) == 0 {
		return AlwaysPresent(), nil
	}
	if len(b) < 8 {
		return nil, corruptAt(0, "an int hash count and an int word count (8 bytes)", fmt.Errorf("only %d bytes", len(b)))
	}
	hashes := int32(binary.BigEndian.Uint32(b))
	if hashes < 1 || hashes > maxHashCount {
		return nil, corruptAt(0, fmt.Sprintf("a hash count in 1..%d", maxHashCount), fmt.Errorf("found %d", hashes))
	}
	words := int32(binary.BigEndian.Uint32(b[4:]))
	rest := b[8:]
	if words < 1 || int64(words)*8 != int64(len(rest)) {
		return nil, corruptAt(4, fmt.Sprintf("a word count > 0 covering the remaining %d bytes (%d bytes a word)", len(rest), 8),
			fmt.Errorf("found %d words", words))
	}
	bits := make([]byte, len(rest))
	if oldFormat {
		for w := 0; w < len(rest); w += 8 {
			binary.LittleEndian.PutUint64(bits[w:], binary.BigEndian.Uint64(rest[w:]))
		}
	} else {
		copy(bits, rest)
	}
	return &BloomFilter{hashCount: int(hashes), bits: bits}, nil
}

// SerializedSize is the length Encode returns.
func (f *BloomFilter) SerializedSize() int {
	if f.alwaysPresent {
		return 0
	}
	return 8 + len(f.bits)
}

// Encode serializes the filter as version oldFormat/new-format Filter.db.
func (f *BloomFilter) Encode(oldFormat bool) []byte {
	return f.AppendEncoded(make([]byte, 0, f.SerializedSize()), oldFormat)
}

// AppendEncoded appends the serialized filter to dst.
func (f *BloomFilter) AppendEncoded(dst []byte, oldFormat bool) []byte {
	if f.alwaysPresent {
		return dst
	}
	f.settle()
	dst = binary.BigEndian.AppendUint32(dst, uint32(f.hashCount))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.bits)/8))
	if !oldFormat {
		return append(dst, f.bits...)
	}
	for w := 0; w < len(f.bits); w += 8 {
		dst = binary.BigEndian.AppendUint64(dst, binary.LittleEndian.Uint64(f.bits[w:]))
	}
	return dst
}

// MightContain reports whether key may be in the sstable; false means it
// certainly is not. It does not allocate.
func (f *BloomFilter) MightContain(key []byte) bool {
	if f.alwaysPresent {
		return true
	}
	f.settle()
	h0, h1 := murmur.Hash128(key, 0)
	base, inc, max := int64(h1), int64(h0), int64(len(f.bits))*8
	for range f.hashCount {
		i := abs(base % max)
		if f.bits[i>>3]&(1<<(i&7)) == 0 {
			return false
		}
		base += inc
	}
	return true
}

// Add records key in the filter: its hash now (key may be reused), its
// bits with those of the next keys (see addBatch and regionFilterBytes),
// before anything reads them.
func (f *BloomFilter) Add(key []byte) {
	if f.alwaysPresent {
		return
	}
	h0, h1 := murmur.Hash128(key, 0)
	if f.byRegion() {
		f.idx = f.appendIndexes(f.idx, h0, h1)
		if len(f.idx) >= len(f.bits)/16 { // four a cache line
			f.settle()
		}
		return
	}
	f.pending = append(f.pending, [2]uint64{h0, h1})
	if len(f.pending) >= addBatch {
		f.settle()
	}
}

// appendIndexes appends the bit indexes of the key of hash h0, h1.
func (f *BloomFilter) appendIndexes(idx []int64, h0, h1 uint64) []int64 {
	base, inc, max := int64(h1), int64(h0), int64(len(f.bits))*8
	for range f.hashCount {
		idx = append(idx, abs(base%max))
		base += inc
	}
	return idx
}

// settle sets the bits of the keys pending: every index first, then the
// bits in one loop (see addBatch), or region by region.
func (f *BloomFilter) settle() {
	if len(f.pending) == 0 && len(f.idx) == 0 {
		return
	}
	idx := f.idx
	for _, h := range f.pending {
		idx = f.appendIndexes(idx, h[0], h[1])
	}
	if f.byRegion() {
		f.settleByRegion(idx)
	} else {
		for _, i := range idx {
			f.bits[i>>3] |= 1 << (i & 7)
		}
	}
	f.idx, f.pending = idx[:0], f.pending[:0]
}

// settleByRegion sets the bits at idx grouped by region of the bitset (a
// counting sort on the index's high bits), one region after the other; the
// bits set are the same, only their order changes.
func (f *BloomFilter) settleByRegion(idx []int64) {
	regions := int((int64(len(f.bits))*8-1)>>regionShift) + 1
	ends := slices.Grow(f.ends[:0], regions)[:regions]
	clear(ends)
	for _, i := range idx {
		ends[i>>regionShift]++
	}
	start := 0
	for r, n := range ends {
		ends[r] = start // where region r's indexes go next
		start += n
	}
	local := slices.Grow(f.local[:0], len(idx))[:len(idx)]
	const mask = 1<<regionShift - 1
	for _, i := range idx {
		r := i >> regionShift
		local[ends[r]] = uint32(i & mask)
		ends[r]++ // ends up at the end of region r
	}
	start = 0
	for r, end := range ends {
		region := f.bits[r<<(regionShift-3):]
		for _, l := range local[start:end] {
			region[l>>3] |= 1 << (l & 7)
		}
		start = end
	}
	f.local, f.ends = local, ends
}

// Empty returns a filter with f's hash count and capacity and no key in
// it: adding the keys f should hold rebuilds f bit for bit, since a key's
// bits depend only on those two (verify compares the two with Extra).
func (f *BloomFilter) Empty() *BloomFilter {
	if f.alwaysPresent {
		return AlwaysPresent()
	}
	return &BloomFilter{hashCount: f.hashCount, bits: make([]byte, len(f.bits))}
}

// Extra compares f with g, a filter of the same capacity: the number of
// bitset bytes where f sets a bit that g does not, and the first of them
// (-1 when none) with those bits.
func (f *BloomFilter) Extra(g *BloomFilter) (n, first int, bits byte) {
	f.settle()
	g.settle()
	first = -1
	for i := range min(len(f.bits), len(g.bits)) {
		if x := f.bits[i] &^ g.bits[i]; x != 0 {
			if first < 0 {
				first, bits = i, x
			}
			n++
		}
	}
	return n, first, bits
}

// FileOffset is where byte i of the bitset is stored in Filter.db: after
// the two ints, and before na inside its word's big-endian long.
func FileOffset(i int, oldFormat bool) int64 {
	if oldFormat {
		i = i&^7 + 7 - i&7
	}
	return 8 + int64(i)
}

// HashCountFor is the hash count FilterFactory.getFilter chooses for a
// filter of numElements keys at bloom_filter_fp_chance fpChance (0 for the
// always-present filter of fpChance 1).
func HashCountFor(numElements int64, fpChance float64) (int, error) {
	if err := checkFPChance(fpChance); err != nil || fpChance == 1 {
		return 0, err
	}
	maxBuckets, err := maxBucketsPerElement(numElements)
	if err != nil {
		return 0, err
	}
	hashes, _, err := bloomSpec(maxBuckets, fpChance)
	return hashes, err
}

// abs is FBUtilities.abs; base % max is never MinInt64 here.
func abs(v int64) int64 {
	neg := v >> 63
	return (v ^ neg) - neg
}

// New returns an empty filter sized as Cassandra's FilterFactory.getFilter
// sizes one for numElements keys and a target false-positive chance
// (bloom_filter_fp_chance), so that adding the same keys reproduces the
// Filter.db Cassandra writes. fpChance 1.0 gives the always-present filter.
func New(numElements int64, fpChance float64) (*BloomFilter, error) {
	if err := checkFPChance(fpChance); err != nil {
		return nil, err
	}
	if numElements < 0 {
		return nil, fmt.Errorf("bloom filter for %d elements: expected a non-negative count", numElements)
	}
	if fpChance == 1 {
		return AlwaysPresent(), nil
	}
	maxBuckets, err := maxBucketsPerElement(numElements)
	if err != nil {
		return nil, err
	}
	hashes, buckets, err := bloomSpec(maxBuckets, fpChance)
	if err != nil {
		return nil, err
	}
	if numElements > (math.MaxInt64-bitsetExcess)/int64(buckets) {
		return nil, fmt.Errorf("bloom filter for %d elements at %d bits each overflows", numElements, buckets)
	}
	numBits := numElements*int64(buckets) + bitsetExcess
	words := (uint64(numBits-1) >> 6) + 1
	if words > math.MaxInt32 {
		return nil, fmt.Errorf("bloom filter of %d bits is larger than 16GiB; raise bloom_filter_fp_chance", numBits)
	}
	return &BloomFilter{hashCount: hashes, bits: make([]byte, words*8)}, nil
}

func checkFPChance(fpChance float64) error {
	if math.IsNaN(fpChance) || fpChance <= 0 || fpChance > 1 {
		return fmt.Errorf("bloom filter fp chance %v: expected a value in (0, 1]", fpChance)
	}
	return nil
}

func corruptAt(off int64, expected string, err error) error {
	return &corrupt.Error{Component: component, Offset: off, Expected: expected, Err: err}
}
