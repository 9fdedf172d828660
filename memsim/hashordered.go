package memsim

import "unsafe"

// hoNode is an entry of the token-ordered list. Dummy nodes mark the start
// of each hash bucket (the split-ordered list technique) so that the index
// can point into the list at every bucket boundary.
type hoNode struct {
	tok  uint64
	id   uint32 // partition id; 0 for a bucket's dummy node
	next uint32
}

// hashOrdered is the structure of CASSANDRA-7282: partitions kept in one
// list in token order (so range scans and flushes need no sort) with a
// hash index beside it. With a hash partitioner the token is the hash, so
// bucket b (the top bits of the token) starts at a known place in the
// list: lookups and inserts jump to it and walk about one node. The index
// doubles when it holds fewer buckets than entries.
type hashOrdered struct {
	st      *store
	nodes   pool[hoNode]
	index   []uint32 // dummy node of each bucket
	bits    uint
	entries int
}

func newHashOrdered(st *store) *hashOrdered {
	h := &hashOrdered{st: st}
	h.nodes.alloc(1) // 0 = none
	d := h.nodes.alloc(1)
	*h.nodes.at(d) = hoNode{tok: 0}
	h.index = []uint32{d}
	return h
}

func (h *hashOrdered) bucket(tok uint64) uint32 {
	if h.bits == 0 {
		return 0
	}
	return uint32(tok >> (64 - h.bits))
}

// cmp orders node n against (tok, key); a bucket's dummy sorts first
// among equal tokens.
func (h *hashOrdered) cmp(n uint32, tok uint64, key []byte) int {
	nd := h.nodes.at(n)
	if nd.tok != tok {
		if nd.tok < tok {
			return -1
		}
		return 1
	}
	if nd.id == 0 {
		return -1
	}
	return cmpKey(nd.tok, h.st.key(nd.id), tok, key)
}

// seek returns the last node before (tok, key) and the node after it.
func (h *hashOrdered) seek(tok uint64, key []byte) (prev, next uint32) {
	prev = h.index[h.bucket(tok)]
	for {
		next = h.nodes.at(prev).next
		if next == 0 || h.cmp(next, tok, key) >= 0 {
			return prev, next
		}
		prev = next
	}
}

func (h *hashOrdered) upsert(tok uint64, key []byte, create func() uint32) (uint32, bool) {
	prev, next := h.seek(tok, key)
	if next != 0 && h.cmp(next, tok, key) == 0 {
		return h.nodes.at(next).id, false
	}
	id := create()
	n := h.nodes.alloc(1)
	*h.nodes.at(n) = hoNode{tok: tok, id: id, next: next}
	h.nodes.at(prev).next = n
	h.entries++
	if h.entries > len(h.index) && h.bits < 30 {
		h.grow()
	}
	return id, true
}

// grow doubles the index: one walk of the list splices a dummy node in at
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
			if next == 0 || h.nodes.at(next).tok >= start {
				break
			}
			prev = next
		}
		d := h.nodes.alloc(1)
		*h.nodes.at(d) = hoNode{tok: start, next: h.nodes.at(prev).next}
		h.nodes.at(prev).next = d
		idx[b] = d
	}
	h.index = idx
}

func (h *hashOrdered) get(tok uint64, key []byte) (uint32, bool) {
	_, next := h.seek(tok, key)
	if next != 0 && h.cmp(next, tok, key) == 0 {
		return h.nodes.at(next).id, true
	}
	return 0, false
}

func (h *hashOrdered) goBytes() int64 {
	return h.nodes.bytes(int64(unsafe.Sizeof(hoNode{}))) + int64(cap(h.index))*4
}
