package memsim

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The trie below lays its nodes out as Cassandra's InMemoryTrie does
// (db/tries/InMemoryTrie.md, InMemoryReadTrie.java): 32-byte blocks in
// buffers of 256 << i bytes, 32-bit pointers whose low 5 bits give the node
// type, and the same node kinds and mutation rules (putRecursive). Old
// blocks are never reused, so allocatedPos, which TrieMemtable charges to
// the memtable, matches Cassandra's for the same keys in the same order.
// Keys are the byte-comparable form of DecoratedKey
// (utils/bytecomparable/ByteComparable.md, version OSS50).

const (
	blockSize        = 32
	lastPointerOfs   = blockSize - 4 // 0x1C: child pointer of a chain's last byte
	splitOfs         = blockSize - 4 // 0x1C
	sparseOfs        = blockSize - 2 // 0x1E
	prefixOfs        = blockSize - 1 // 0x1F
	chainMaxOfs      = blockSize - 5 // 0x1B
	sparseChildCount = 6
	sparseChildren   = 0 - sparseOfs
	sparseBytes      = sparseChildCount*4 - sparseOfs
	sparseOrder      = sparseChildCount*5 - sparseOfs
	prefixFlags      = 4 - prefixOfs
	prefixContent    = 0 - prefixOfs
	prefixPointer    = lastPointerOfs - prefixOfs
	splitStartLimit  = 4
	splitOtherLimit  = 8
	bufStartShift    = 8
	bufStartSize     = 1 << bufStartShift
	contentStartShft = 4
	contentStartSize = 1 << contentStartShft
	// referenceArrayHeap is measureDeep(new AtomicReferenceArray<>(0)):
	// the wrapper {array ref} and an empty Object[].
	referenceArrayHeap = 16 + 16
	// Byte-comparable separators (ByteSource.java).
	bcNextComponent = 0x40
	bcTerminator    = 0x38
)

type memTrie struct {
	buffers      [31 - bufStartShift][]byte
	allocatedPos int32
	root         int32
	content      []uint32 // partition ids (the Java trie keeps content in chunked arrays)

	create     func() uint32 // during put: makes a new partition
	resID      uint32
	resCreated bool
}

func chunkIdx(pos, shift, size int32) int32 {
	return 31 - shift - int32(bits.LeadingZeros32(uint32(pos+size)))
}

func (t *memTrie) loc(pos int32) ([]byte, int32) {
	i := chunkIdx(pos, bufStartShift, bufStartSize)
	return t.buffers[i], pos + bufStartSize - (bufStartSize << i)
}

func (t *memTrie) getByte(pos int32) int32 {
	b, o := t.loc(pos)
	return int32(b[o])
}

func (t *memTrie) putByte(pos int32, v int32) {
	b, o := t.loc(pos)
	b[o] = byte(v)
}

func (t *memTrie) getInt(pos int32) int32 {
	b, o := t.loc(pos)
	return int32(binary.BigEndian.Uint32(b[o:]))
}

func (t *memTrie) putInt(pos, v int32) {
	b, o := t.loc(pos)
	binary.BigEndian.PutUint32(b[o:], uint32(v))
}

func (t *memTrie) getShort(pos int32) int32 {
	b, o := t.loc(pos)
	return int32(binary.BigEndian.Uint16(b[o:]))
}

func (t *memTrie) putShort(pos, v int32) {
	b, o := t.loc(pos)
	binary.BigEndian.PutUint16(b[o:], uint16(v))
}

func (t *memTrie) allocateBlock() int32 {
	v := t.allocatedPos
	if _, o := t.locChunkStart(v); o {
		i := chunkIdx(v, bufStartShift, bufStartSize)
		t.buffers[i] = make([]byte, bufStartSize<<i)
	}
	t.allocatedPos += blockSize
	return v
}

// locChunkStart reports whether pos is the first byte of a not yet
// allocated buffer.
func (t *memTrie) locChunkStart(pos int32) (int32, bool) {
	i := chunkIdx(pos, bufStartShift, bufStartSize)
	in := pos + bufStartSize - (bufStartSize << i)
	return i, in == 0 && t.buffers[i] == nil
}

func offset(p int32) int32      { return p & (blockSize - 1) }
func isNull(p int32) bool       { return p == 0 }
func isLeaf(p int32) bool       { return p < 0 }
func isNullOrLeaf(p int32) bool { return p <= 0 }

func (t *memTrie) addContent(id uint32) int32 {
	t.content = append(t.content, id)
	return int32(len(t.content) - 1)
}

func (t *memTrie) followContent(node int32) int32 {
	if isNullOrLeaf(node) {
		return 0
	}
	if offset(node) == prefixOfs {
		b := t.getByte(node + prefixFlags)
		if b < blockSize {
			return node - prefixOfs + b
		}
		return t.getInt(node + prefixPointer)
	}
	return node
}

func (t *memTrie) getChild(node, trans int32) int32 {
	if isNullOrLeaf(node) {
		return 0
	}
	node = t.followContent(node)
	switch offset(node) {
	case sparseOfs:
		for i := int32(0); i < sparseChildCount; i++ {
			if t.getByte(node+sparseBytes+i) == trans {
				if c := t.getInt(node + sparseChildren + i*4); c != 0 {
					return c
				}
			}
		}
		return 0
	case splitOfs:
		mid := t.getInt(splitPtr(node, (trans>>6)&3, splitStartLimit))
		if isNull(mid) {
			return 0
		}
		tail := t.getInt(splitPtr(mid, (trans>>3)&7, splitOtherLimit))
		if isNull(tail) {
			return 0
		}
		return t.getInt(splitPtr(tail, trans&7, splitOtherLimit))
	case chainMaxOfs:
		if trans != t.getByte(node) {
			return 0
		}
		return t.getInt(node + 1)
	default:
		if trans != t.getByte(node) {
			return 0
		}
		return node + 1
	}
}

func splitPtr(node, idx, limit int32) int32 {
	return node - splitOfs + (8-limit+idx)*4
}

func (t *memTrie) attachChild(node, trans, child int32) int32 {
	switch offset(node) {
	case sparseOfs:
		return t.attachToSparse(node, trans, child)
	case splitOfs:
		t.attachToSplit(node, trans, child)
		return node
	case lastPointerOfs - 1:
		if trans == t.getByte(node) {
			t.putInt(node+1, child)
			return node
		}
	}
	return t.attachToChain(node, trans, child)
}

func (t *memTrie) attachToSplit(node, trans, child int32) {
	midPos := splitPtr(node, (trans>>6)&3, splitStartLimit)
	mid := t.getInt(midPos)
	if isNull(mid) {
		mid = t.allocateBlock() + splitOfs
		tailPos := splitPtr(mid, (trans>>3)&7, splitOtherLimit)
		tail := t.allocateBlock() + splitOfs
		t.putInt(splitPtr(tail, trans&7, splitOtherLimit), child)
		t.putInt(tailPos, tail)
		t.putInt(midPos, mid)
		return
	}
	tailPos := splitPtr(mid, (trans>>3)&7, splitOtherLimit)
	tail := t.getInt(tailPos)
	if isNull(tail) {
		tail = t.allocateBlock() + splitOfs
		t.putInt(splitPtr(tail, trans&7, splitOtherLimit), child)
		t.putInt(tailPos, tail)
		return
	}
	t.putInt(splitPtr(tail, trans&7, splitOtherLimit), child)
}

func (t *memTrie) attachToSparse(node, trans, child int32) int32 {
	var index, smaller int32
	for index = 0; index < sparseChildCount; index++ {
		if isNull(t.getInt(node + sparseChildren + index*4)) {
			break
		}
		existing := t.getByte(node + sparseBytes + index)
		if existing == trans {
			t.putInt(node+sparseChildren+index*4, child)
			return node
		}
		if existing < trans {
			smaller++
		}
	}
	if index == sparseChildCount { // full: becomes a split node
		split := t.allocateBlock() + splitOfs
		for i := int32(0); i < sparseChildCount; i++ {
			t.attachToSplit(split, t.getByte(node+sparseBytes+i), t.getInt(node+sparseChildren+i*4))
		}
		t.attachToSplit(split, trans, child)
		return split
	}
	t.putByte(node+sparseBytes+index, trans)
	order := t.getShort(node + sparseOrder)
	r := int32(1)
	for i := int32(0); i < smaller; i++ {
		r *= 6
	}
	t.putInt(node+sparseChildren+index*4, child)
	t.putShort(node+sparseOrder, order%r+(order/r*6+index)*r)
	return node
}

func (t *memTrie) attachToChain(node, trans, child int32) int32 {
	existing := t.getByte(node)
	if trans == existing {
		return t.expandOrCreateChain(trans, child)
	}
	existingChild := node + 1
	if offset(existingChild) == lastPointerOfs {
		existingChild = t.getInt(existingChild)
	}
	return t.createSparse(existing, existingChild, trans, child)
}

func (t *memTrie) createSparse(b1, c1, b2, c2 int32) int32 {
	if b1 > b2 {
		b1, b2, c1, c2 = b2, b1, c2, c1
	}
	node := t.allocateBlock() + sparseOfs
	t.putByte(node+sparseBytes, b1)
	t.putByte(node+sparseBytes+1, b2)
	t.putInt(node+sparseChildren, c1)
	t.putInt(node+sparseChildren+4, c2)
	t.putShort(node+sparseOrder, 1*6+0)
	return node
}

func (t *memTrie) expandOrCreateChain(trans, child int32) int32 {
	o := offset(child)
	if child > 0 && child-1 > 0 && o > 0 && o <= chainMaxOfs {
		t.putByte(child-1, trans)
		return child - 1
	}
	node := t.allocateBlock() + lastPointerOfs - 1
	t.putByte(node, trans)
	t.putInt(node+1, child)
	return node
}

func (t *memTrie) createPrefix(contentIdx, child int32, safeChain bool) int32 {
	o := offset(child)
	var node int32
	if o == splitOfs || safeChain && o > prefixFlags+prefixOfs && o <= chainMaxOfs {
		node = (child &^ (blockSize - 1)) | prefixOfs
		t.putByte(node+prefixFlags, o)
	} else {
		node = t.allocateBlock() + prefixOfs
		t.putByte(node+prefixFlags, 0xFF)
		t.putInt(node+prefixPointer, child)
	}
	t.putInt(node+prefixContent, contentIdx)
	return node
}

func (t *memTrie) preserveContent(preContent, postContent, updated int32) int32 {
	if preContent == postContent {
		return updated
	}
	if postContent == updated {
		return preContent
	}
	if isLeaf(preContent) {
		return t.createPrefix(^preContent, updated, true)
	}
	// A prefix node whose child changed.
	if t.getByte(preContent+prefixFlags) >= blockSize {
		t.putInt(preContent+prefixPointer, updated)
		return preContent
	}
	return t.createPrefix(t.getInt(preContent+prefixContent), updated, true)
}

// put maps key to the partition id that create returns, unless the key is
// present; it returns the id and whether it was created.
func (t *memTrie) put(key []byte, create func() uint32) (uint32, bool) {
	t.create, t.resID, t.resCreated = create, 0, false
	t.root = t.putRec(t.root, key)
	t.create = nil
	return t.resID, t.resCreated
}

// applyContent records the content of the key being put: the existing
// partition, or a new one.
func (t *memTrie) applyContent(existing int32, has bool) int32 {
	if has {
		t.resID = t.content[existing]
		return existing
	}
	t.resID, t.resCreated = t.create(), true
	return t.addContent(t.resID)
}

// putRec is InMemoryTrie.putRecursive.
func (t *memTrie) putRec(node int32, key []byte) int32 {
	if len(key) == 0 {
		switch {
		case isNull(node):
			return ^t.applyContent(0, false)
		case isLeaf(node):
			t.applyContent(^node, true)
			return node
		case offset(node) == prefixOfs:
			t.applyContent(t.getInt(node+prefixContent), true)
			return node
		}
		return t.createPrefix(t.applyContent(0, false), node, false)
	}
	trans := int32(key[0])
	child := t.getChild(node, trans)
	newChild := t.putRec(child, key[1:])
	if newChild == child {
		return node
	}
	skipped := t.followContent(node)
	var attached int32
	if !isNull(skipped) {
		attached = t.attachChild(skipped, trans, newChild)
	} else {
		attached = t.expandOrCreateChain(trans, newChild)
	}
	return t.preserveContent(node, skipped, attached)
}

// get returns the content stored for key.
func (t *memTrie) get(key []byte) (uint32, bool) {
	node := t.root
	for _, b := range key {
		node = t.getChild(node, int32(b))
		if isNull(node) {
			return 0, false
		}
	}
	if isLeaf(node) {
		return t.content[^node], true
	}
	if !isNull(node) && offset(node) == prefixOfs {
		return t.content[t.getInt(node+prefixContent)], true
	}
	return 0, false
}

// sizeOnHeap is InMemoryTrie.sizeOnHeap without the empty trie's own
// objects: content references and content array chunks, plus the node
// buffers when they are on heap, plus the buffer chunks.
func (t *memTrie) javaSize() (buffers, onHeap int64) {
	n := int32(len(t.content))
	onHeap = int64(n)*4 + referenceArrayHeap*int64(chunkIdx(n, contentStartShft, contentStartSize)) +
		referenceArrayHeap*int64(chunkIdx(t.allocatedPos, bufStartShift, bufStartSize))
	return int64(t.allocatedPos), onHeap
}

// shardedTrie is TrieMemtable's set of shards, each an InMemoryTrie over an
// equal slice of the token range.
type shardedTrie struct {
	shards []memTrie
	part   Partitioner
	key    []byte
	// touch's scratch: the batch's comparable keys and walk state.
	touchBuf  []byte
	touchKeys [][]byte
	touchNode []int32
	touchAt   []int
	// The change of the last upsert's shard in InMemoryTrie.sizeOffHeap
	// (node buffers) and sizeOnHeap without them (content references and
	// chunk arrays), for the memtable to charge when it applies the op.
	lastBuf, lastHeap int64
}

func newShardedTrie(p Partitioner, shards int) *shardedTrie {
	return &shardedTrie{shards: make([]memTrie, shards), part: p}
}

// comparableKey is DecoratedKey.asComparableBytes(OSS50): the token and the
// key as two components, then a terminator. A Murmur3 token is 8 bytes with
// the sign bit flipped (which the order token already is); a
// ByteOrdered token is the key itself, escaped.
func (s *shardedTrie) comparableKey(tok uint64, key []byte) []byte {
	b := append(s.key[:0], bcNextComponent)
	if s.part == ByteOrdered {
		b = appendEscaped(b, key)
	} else {
		b = binary.BigEndian.AppendUint64(b, tok)
	}
	b = append(b, bcNextComponent)
	b = appendEscaped(b, key)
	b = append(b, bcTerminator)
	s.key = b
	return b
}

// appendEscaped is ByteSource's variable-length encoding: a zero byte
// becomes 00 then FE for every further zero and FF before the next
// non-zero byte; the value ends with FE after a trailing zero, else 00.
func appendEscaped(b, v []byte) []byte {
	escaped := false
	for _, c := range v {
		if escaped {
			if c == 0 {
				b = append(b, 0xFE)
				continue
			}
			b = append(b, 0xFF)
			escaped = false
		}
		b = append(b, c)
		if c == 0 {
			escaped = true
		}
	}
	if escaped {
		return append(b, 0xFE)
	}
	return append(b, 0x00)
}

func (s *shardedTrie) shard(tok uint64) *memTrie {
	hi, _ := bits.Mul64(tok, uint64(len(s.shards)))
	return &s.shards[hi]
}

// trieSwitchThreshold is InMemoryTrie.ALLOCATED_SIZE_THRESHOLD at its
// default, 2048*10/11 MiB: once a shard's trie has allocated that much,
// TrieMemtable switches to a new memtable, well before the 32-bit node
// pointers run out at 2 GiB (where allocateBlock would fail).
const trieSwitchThreshold = 1024 * 1024 * (2048 * 10 / 11)

// checkRoom fails once the shard of tok has reached the switch threshold:
// Cassandra would have flushed it, and this trie, like Cassandra's, cannot
// grow past 2 GiB.
func (s *shardedTrie) checkRoom(tok uint64) error {
	if t := s.shard(tok); t.allocatedPos >= trieSwitchThreshold {
		return fmt.Errorf("a trie shard holds %d MiB of nodes, where TrieMemtable switches to a new memtable (InMemoryTrie.ALLOCATED_SIZE_THRESHOLD); replay fewer ops or use more --shards",
			t.allocatedPos>>20)
	}
	return nil
}

func (s *shardedTrie) upsert(tok uint64, key []byte, create func() uint32) (uint32, bool) {
	t := s.shard(tok)
	b0, h0 := t.javaSize()
	id, created := t.put(s.comparableKey(tok, key), create)
	b1, h1 := t.javaSize()
	s.lastBuf, s.lastHeap = b1-b0, h1-h0
	return id, created
}

// touch walks the keys of a batch down their shards' tries one level per
// round, reading only: the walks of different keys are independent, so
// their cache misses overlap instead of following each other, and the
// puts that follow find their paths in cache. It changes nothing.
func (s *shardedTrie) touch(toks []uint64, keys [][]byte) int32 {
	n := len(toks)
	s.touchBuf, s.touchKeys = s.touchBuf[:0], s.touchKeys[:0]
	s.touchNode, s.touchAt = s.touchNode[:0], s.touchAt[:0]
	for j := 0; j < n; j++ {
		start := len(s.touchBuf)
		s.touchBuf = append(s.touchBuf, s.comparableKey(toks[j], keys[j])...)
		s.touchKeys = append(s.touchKeys, s.touchBuf[start:len(s.touchBuf):len(s.touchBuf)])
		s.touchNode = append(s.touchNode, s.shard(toks[j]).root)
		s.touchAt = append(s.touchAt, 0)
	}
	// touchBuf may have moved while growing: slice the keys again.
	off := 0
	for j := range s.touchKeys {
		l := len(s.touchKeys[j])
		s.touchKeys[j] = s.touchBuf[off : off+l : off+l]
		off += l
	}
	var sink int32
	for active := n; active > 0; {
		active = 0
		for j := 0; j < n; j++ {
			node, at := s.touchNode[j], s.touchAt[j]
			if isNullOrLeaf(node) || at >= len(s.touchKeys[j]) {
				continue
			}
			node = s.shard(toks[j]).getChild(node, int32(s.touchKeys[j][at]))
			s.touchNode[j], s.touchAt[j] = node, at+1
			sink += node
			active++
		}
	}
	return sink
}

func (s *shardedTrie) get(tok uint64, key []byte) (uint32, bool) {
	return s.shard(tok).get(s.comparableKey(tok, key))
}

func (s *shardedTrie) goBytes() int64 {
	var n int64
	for i := range s.shards {
		for _, b := range s.shards[i].buffers {
			n += int64(cap(b))
		}
		n += int64(cap(s.shards[i].content)) * 4
	}
	return n
}

// TrieUsedBytes returns the trie node bytes allocated (allocatedPos summed
// over shards) of a trie memtable, 0 for other kinds.
func (m *Memtable) TrieUsedBytes() int64 {
	ln := m.lane(Trie)
	if ln == nil {
		return 0
	}
	st := ln.trie
	var n int64
	for i := range st.shards {
		n += int64(st.shards[i].allocatedPos)
	}
	return n
}
