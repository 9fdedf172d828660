package memsim

import (
	"unsafe"

	"github.com/sstabletool/sstabletool/internal/format/murmur"
	"github.com/sstabletool/sstabletool/memsim/internal/jvm"
)

// hoNode is an entry of the hash-ordered list. A sentinel node (id 0)
// marks the start of each bucket (the split-ordered list technique), so
// the index can point into the list at every bucket boundary.
type hoNode struct {
	h    uint64 // order hash (see hashOrdered.hash)
	id   uint32 // partition id; 0 for a bucket's sentinel
	next uint32
}

// hoMaxLoad is the most entries per bucket before the index doubles. At 2
// a lookup walks 1 to 2 entries past its sentinel; the index and its
// sentinels cost 1/2 to 1/4 of a Java node and reference per entry. (At 1
// the walk is shorter but they cost as much as the entries themselves.)
const hoMaxLoad = 2

// hashOrdered is the structure of CASSANDRA-7282: partitions kept in one
// list ordered by the hash of their token, with a hash index beside it.
// Bucket b is the range of hashes whose top bits are b; it starts with a
// sentinel node, so a lookup or insert jumps to its bucket's sentinel and
// walks about hoMaxLoad/2 nodes: O(1) expected whatever the keys, because
// the hash spreads them.
//
// With Murmur3Partitioner the token is already a uniform hash, so it is
// the order hash and the list is in token order (a flush needs no sort,
// the point of the proposal). ByteOrderedPartitioner's token is the key
// itself: ordering by it put sequential keys into one bucket (quadratic),
// so its order hash is MurmurHash3 of the key, and the list is not in
// token order (a flush would sort).
//
// It also keeps the heap bytes the equivalent Java structure would hold
// (javaBytes): every node and sentinel as a split-ordered-list node and
// the bucket array, at its current size.
type hashOrdered struct {
	keys    *keyStore
	part    Partitioner
	nodes   pool[hoNode]
	index   []uint32 // sentinel of each bucket
	bits    uint
	entries int
	nodeCnt int64 // nodes including sentinels (nodes.next counts skipped chunk tails)

	javaNode int64 // jvm.Layout.HashOrderedNode
	walked   int64 // nodes visited by seeks, for tests of the walk length
}

func newHashOrdered(keys *keyStore, part Partitioner, l *jvm.Layout) *hashOrdered {
	h := &hashOrdered{keys: keys, part: part, javaNode: l.HashOrderedNode}
	h.nodes.alloc(1) // 0 = none
	d := h.nodes.alloc(1)
	*h.nodes.at(d) = hoNode{}
	h.nodeCnt = 1
	h.index = []uint32{d}
	return h
}

// hash is the order hash of a key whose order token is tok.
func (h *hashOrdered) hash(tok uint64, key []byte) uint64 {
	if h.part == ByteOrdered {
		v, _ := murmur.Hash128(key, 0)
		return uint64(v)
	}
	return tok
}

func (h *hashOrdered) bucket(v uint64) uint32 {
	if h.bits == 0 {
		return 0
	}
	return uint32(v >> (64 - h.bits))
}

// cmp orders node n against (v, key); a bucket's sentinel sorts first
// among equal hashes.
func (h *hashOrdered) cmp(n uint32, v uint64, key []byte) int {
	nd := h.nodes.at(n)
	if nd.h != v {
		if nd.h < v {
			return -1
		}
		return 1
	}
	if nd.id == 0 {
		return -1
	}
	return cmpKey(0, h.keys.get(nd.id), 0, key)
}

// seek returns the last node before (v, key) and the node after it.
func (h *hashOrdered) seek(v uint64, key []byte) (prev, next uint32) {
	prev = h.index[h.bucket(v)]
	for {
		h.walked++
		next = h.nodes.at(prev).next
		if next == 0 || h.cmp(next, v, key) >= 0 {
			return prev, next
		}
		prev = next
	}
}

func (h *hashOrdered) upsert(tok uint64, key []byte, create func() uint32) (uint32, bool) {
	v := h.hash(tok, key)
	prev, next := h.seek(v, key)
	if next != 0 && h.cmp(next, v, key) == 0 {
		return h.nodes.at(next).id, false
	}
	id := create()
	n := h.nodes.alloc(1)
	*h.nodes.at(n) = hoNode{h: v, id: id, next: next}
	h.nodes.at(prev).next = n
	h.nodeCnt++
	h.entries++
	if h.entries > hoMaxLoad*len(h.index) && h.bits < 30 {
		h.grow()
	}
	return id, true
}

// grow doubles the index: one walk of the list splices a sentinel in at
// the start of every new odd bucket.
func (h *hashOrdered) grow() {
	h.bits++
	idx := make([]uint32, 1<<h.bits)
	shift := 64 - h.bits
	for b := range h.index {
		idx[2*b] = h.index[b]
	}
	for b := 1; b < len(idx); b += 2 {
		start := uint64(b) << shift
		prev := idx[b-1]
		for {
			next := h.nodes.at(prev).next
			if next == 0 || h.nodes.at(next).h >= start {
				break
			}
			prev = next
		}
		d := h.nodes.alloc(1)
		*h.nodes.at(d) = hoNode{h: start, next: h.nodes.at(prev).next}
		h.nodes.at(prev).next = d
		h.nodeCnt++
		idx[b] = d
	}
	h.index = idx
}

// touch reads, for each key of a batch, its bucket's sentinel and the
// node after it: independent loads whose cache misses overlap, so that
// the upserts that follow find them in cache. It changes nothing.
func (h *hashOrdered) touch(toks []uint64, keys [][]byte) uint64 {
	var sink uint64
	for j := range toks {
		s := h.nodes.at(h.index[h.bucket(h.hash(toks[j], keys[j]))])
		sink += uint64(s.next)
	}
	for j := range toks {
		s := h.nodes.at(h.index[h.bucket(h.hash(toks[j], keys[j]))])
		if s.next != 0 {
			sink += h.nodes.at(s.next).h
		}
	}
	return sink
}

func (h *hashOrdered) get(tok uint64, key []byte) (uint32, bool) {
	v := h.hash(tok, key)
	_, next := h.seek(v, key)
	if next != 0 && h.cmp(next, v, key) == 0 {
		return h.nodes.at(next).id, true
	}
	return 0, false
}

// javaBytes is the heap the Java structure holds: a node per entry and per
// sentinel, and the bucket array (AtomicReferenceArray: its object and an
// Object[] of one reference per bucket).
func (h *hashOrdered) javaBytes() int64 {
	return h.nodeCnt*h.javaNode + jvm.Object(jvm.Ref) + jvm.RefArray(int64(len(h.index)))
}

func (h *hashOrdered) goBytes() int64 {
	return h.nodes.bytes(int64(unsafe.Sizeof(hoNode{}))) + int64(cap(h.index))*4 + h.keys.bytes()
}
