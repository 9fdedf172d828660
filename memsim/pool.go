package memsim

import "encoding/binary"

// The Go structures keep keys, values, partitions, rows and cells in large
// chunks addressed by 32-bit indexes instead of one Go object per item, for
// the same reason Cassandra slabs its memtable memory: ten million small
// objects would cost more in headers and garbage-collector work than in
// data. Every chunk type here is pointer-free, so the collector never scans
// them. (No well-kept library offers typed, pointer-free, index-addressed
// pools; these are a few lines each.)

const (
	chunkShift = 12
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1
)

// pool is a growable array of T in fixed chunks; blocks of up to chunkLen
// contiguous items never straddle a chunk.
type pool[T any] struct {
	chunks [][]T
	next   uint32 // index of the next free item
	spare  []T    // allocated, not yet handed out chunks
	group  int    // chunks in the next allocation (doubles up to maxGroup)
}

// Chunks are allocated in groups that double up to maxGroup chunks, so
// that big replays get few, large allocations the kernel can back with
// huge pages (random access over gigabytes otherwise spends most of its
// time in TLB misses), while small ones stay small.
const maxGroup = 32

func (p *pool[T]) newChunk() []T {
	if len(p.spare) == 0 {
		p.group = min(max(p.group*2, 1), maxGroup)
		p.spare = make([]T, p.group*chunkLen)
		adviseHuge(p.spare)
	}
	c := p.spare[:chunkLen:chunkLen]
	p.spare = p.spare[chunkLen:]
	return c
}

// alloc reserves k contiguous items (1 <= k <= chunkLen) and returns the
// index of the first.
func (p *pool[T]) alloc(k int) uint32 {
	off := int(p.next & chunkMask)
	if off+k > chunkLen {
		p.next += uint32(chunkLen - off) // skip the tail of this chunk
		off = 0
	}
	start := p.next
	if c := int(start >> chunkShift); c >= len(p.chunks) {
		p.chunks = append(p.chunks, p.newChunk())
	}
	p.next += uint32(k)
	return start
}

func (p *pool[T]) at(i uint32) *T { return &p.chunks[i>>chunkShift][i&chunkMask] }

// block returns the k items starting at i as a slice.
func (p *pool[T]) block(i uint32, k int) []T {
	c := p.chunks[i>>chunkShift]
	o := int(i & chunkMask)
	return c[o : o+k : o+k]
}

// bytes is the memory the pool holds.
func (p *pool[T]) bytes(itemSize int64) int64 {
	return (int64(len(p.chunks))*chunkLen + int64(len(p.spare))) * itemSize
}

// bref addresses bytes in an arena; up to 8 bytes (a bigint, a
// timestamp) are kept in the bref itself, which saves their room in the
// arena: for ten million bigint values, 80 MB.
type bref struct {
	b [8]byte // the bytes, or the arena chunk and offset (little-endian)
	n uint32
}

// arena stores byte strings in 1 MiB chunks (bigger strings get a chunk of
// their own), like SlabAllocator's regions.
type arena struct {
	chunks [][]byte
	used   int64
}

const arenaChunk = 1 << 20

func (a *arena) put(b []byte) bref {
	r := bref{n: uint32(len(b))}
	if len(b) <= len(r.b) {
		copy(r.b[:], b)
		return r
	}
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+len(b) > cap(a.chunks[last]) {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, len(b))))
		last++
	}
	c := a.chunks[last]
	binary.LittleEndian.PutUint32(r.b[:4], uint32(last))
	binary.LittleEndian.PutUint32(r.b[4:], uint32(len(c)))
	a.chunks[last] = append(c, b...)
	a.used += int64(len(b))
	return r
}

// get returns r's bytes (nil for none); they alias r when it holds them.
func (a *arena) get(r *bref) []byte {
	switch {
	case r.n == 0:
		return nil
	case r.n <= uint32(len(r.b)):
		return r.b[:r.n:r.n]
	}
	chunk, off := binary.LittleEndian.Uint32(r.b[:4]), binary.LittleEndian.Uint32(r.b[4:])
	return a.chunks[chunk][off : off+r.n : off+r.n]
}

func (a *arena) bytes() int64 {
	var s int64
	for _, c := range a.chunks {
		s += int64(cap(c))
	}
	return s
}

// keyStore keeps the partition keys of one partition map by partition id,
// for the comparisons of keys whose tokens tie. Each map that compares
// keys has its own, so that the maps of a replay run on their own
// goroutines without sharing anything they write.
type keyStore struct {
	refs pool[bref]
	data arena
}

func newKeyStore() *keyStore {
	k := &keyStore{}
	k.refs.alloc(1) // id 0 is never a partition
	return k
}

// add stores the key of partition id; ids are added in increasing order.
func (k *keyStore) add(id uint32, key []byte) {
	for k.refs.next <= id {
		k.refs.alloc(1)
	}
	*k.refs.at(id) = k.data.put(key)
}

func (k *keyStore) get(id uint32) []byte { return k.data.get(k.refs.at(id)) }

func (k *keyStore) bytes() int64 { return k.refs.bytes(12) + k.data.bytes() }
