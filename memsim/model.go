package memsim

import (
	"fmt"
	"math"
	"strings"

	"github.com/sstabletool/sstabletool/memsim/internal/jvm"
)

// AllocType is Cassandra's memtable_allocation_type (config/Config.java).
type AllocType int

const (
	UnslabbedHeapBuffers AllocType = iota // HeapPool: ByteBuffer.allocate per value
	HeapBuffers                           // SlabPool on heap: 1 MiB heap regions
	OffheapBuffers                        // SlabPool off heap: 1 MiB direct regions
	OffheapObjects                        // NativePool: NativeCell/NativeClustering/NativeDecoratedKey
	numAllocTypes
)

var allocNames = [...]string{"unslabbed_heap_buffers", "heap_buffers", "offheap_buffers", "offheap_objects"}

func (t AllocType) String() string { return allocNames[t] }

// AllocTypes lists every allocation type.
var AllocTypes = []AllocType{UnslabbedHeapBuffers, HeapBuffers, OffheapBuffers, OffheapObjects}

// ParseAllocType reads a memtable_allocation_type name.
func ParseAllocType(s string) (AllocType, error) {
	for i, n := range allocNames {
		if strings.EqualFold(s, n) {
			return AllocType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown allocation type %q (want %s)", s, strings.Join(allocNames[:], ", "))
}

// trieOnHeap says where TrieMemtable keeps its trie buffers for an
// allocation type (MemtableAllocationType.toBufferType).
func (t AllocType) trieOnHeap() bool { return t == UnslabbedHeapBuffers || t == HeapBuffers }

// maxSlabbed is SlabAllocator's and NativeAllocator's MAX_CLONED_SIZE: larger
// values are allocated on their own instead of in a region.
const maxSlabbed = 128 * 1024

// Account holds, for every allocation type, the bytes Cassandra's
// MemtableAllocator would report as owned on and off heap
// (SubAllocator.owns: the sum of requested sizes, never slab regions).
type Account struct {
	L     jvm.Layout
	On    [numAllocTypes]int64
	Off   [numAllocTypes]int64
	Live  int64 // Memtable.getLiveDataSize
	Cells int64 // live cells held (for per-cell overhead)
}

// heap adds bytes that are on heap whatever the allocation type.
func (a *Account) heap(n int64) {
	for t := range a.On {
		a.On[t] += n
	}
}

// buffer accounts a value cloned into the memtable as a ByteBuffer of n
// bytes: its requested bytes (added only when it is allocated, sign > 0,
// because memtable regions are never freed) and its ByteBuffer object
// (ObjectSizes.sizeOnHeapExcludingDataOf). Not for offheap_objects.
func (a *Account) buffer(sign, n int64) {
	l := &a.L
	if n == 0 {
		// ByteBufferCloner returns the shared EMPTY_BYTE_BUFFER, a wrapped byte[0].
		o := sign * l.HeapBufferExcludingData(0)
		a.On[UnslabbedHeapBuffers] += o
		a.On[HeapBuffers] += o
		a.On[OffheapBuffers] += o
		return
	}
	a.On[UnslabbedHeapBuffers] += sign * l.HeapBufferExcludingData(n)
	if n > maxSlabbed {
		a.On[HeapBuffers] += sign * l.HeapBufferExcludingData(n)
		a.On[OffheapBuffers] += sign * l.DirectBufferDeep
	} else {
		a.On[HeapBuffers] += sign * l.HeapBuffer
		a.On[OffheapBuffers] += sign * l.DirectBuffer
	}
	if sign > 0 {
		a.On[UnslabbedHeapBuffers] += n
		a.On[HeapBuffers] += n
		a.Off[OffheapBuffers] += n
	}
}

// cell accounts a cell entering (sign 1) or leaving (sign -1) the
// memtable: BufferCell or NativeCell (21-byte header: hasPath, timestamp,
// ttl, deletion, length; then value, then a 4-byte path length and path).
func (a *Account) cell(sign, value, path int64, hasPath bool) {
	l := &a.L
	for _, t := range [...]AllocType{UnslabbedHeapBuffers, HeapBuffers, OffheapBuffers} {
		a.On[t] += sign * l.BufferCell
		if hasPath {
			a.On[t] += sign * l.CellPath
		}
	}
	a.buffer(sign, value)
	if hasPath {
		a.buffer(sign, path)
	}
	a.On[OffheapObjects] += sign * l.NativeCell
	if sign > 0 {
		n := 21 + value
		if hasPath {
			n += 4 + path
		}
		a.Off[OffheapObjects] += n
	}
	a.Cells += sign
}

// clustering accounts a row's clustering: BufferClustering with a
// ByteBuffer[] of its values, or NativeClustering (count and offsets as
// shorts, a null bitmap, the values). Static rows use the shared
// STATIC_CLUSTERING and cost nothing; an empty clustering (tables without
// clustering columns) is the shared EMPTY on heap but NativeAllocator still
// copies it.
func (a *Account) clustering(sign int64, lens []int64, static bool) {
	if static {
		return
	}
	l := &a.L
	k := int64(len(lens))
	if k > 0 {
		o := sign * (l.BufferClustering + jvm.RefArray(k))
		a.On[UnslabbedHeapBuffers] += o
		a.On[HeapBuffers] += o
		a.On[OffheapBuffers] += o
		for _, n := range lens {
			a.buffer(sign, n)
		}
	}
	a.On[OffheapObjects] += sign * l.NativeClustering
	if sign > 0 {
		var data int64
		for _, n := range lens {
			data += n
		}
		a.Off[OffheapObjects] += 2*k + 4 + data + (k+7)/8
	}
}

// partitionKey accounts the clone of a new partition's key (skip-list
// style memtables keep a DecoratedKey; the trie keeps the key in its nodes).
func (a *Account) partitionKey(n int64) {
	a.On[UnslabbedHeapBuffers] += n
	a.On[HeapBuffers] += n
	a.Off[OffheapBuffers] += n
	a.Off[OffheapObjects] += 4 + n // NativeDecoratedKey: int length + bytes
}

// perType adds a per-allocation-type amount on heap.
func (a *Account) perType(v [numAllocTypes]int64) {
	for t := range a.On {
		a.On[t] += v[t]
	}
}

// trieBytes accounts growth of a trie's node buffers (on or off heap by
// allocation type) and of its content references (always on heap).
func (a *Account) trieBytes(buffers, onHeap int64) {
	for t := range a.On {
		if AllocType(t).trieOnHeap() {
			a.On[t] += buffers
		} else {
			a.Off[t] += buffers
		}
		a.On[t] += onHeap
	}
}

// RowOverhead is SkipListMemtable.ROW_OVERHEAD_HEAP_SIZE as
// estimateRowOverhead computes it: the average deep size of a map entry
// holding a cloned DecoratedKey with an 8-byte key (measured over 100,000
// entries and rounded: floor when the fraction is below 0.05, else up),
// minus the LongToken (charged per partition at its real size), plus
// AtomicBTreePartition.EMPTY_SIZE and BTreePartitionData.UNSHARED_HEAP_SIZE,
// minus the 8 key bytes unless the allocator is native (the key bytes are
// charged when the key is cloned).
//
// mapEntry is the map's own per-entry bytes: for ConcurrentSkipListMap a
// Node plus on average half an Index. The hash-ordered map passes 0 and is
// charged its nodes, sentinels and bucket array as they are allocated
// (hashOrdered.javaBytes), since its cost per entry changes with the
// entry count.
func RowOverhead(l *jvm.Layout, t AllocType, mapEntry float64) int64 {
	const testKey = 8
	var key float64
	switch t {
	case UnslabbedHeapBuffers: // HeapPool: ByteBuffer.allocate(8), buffer and array
		key = float64(l.BufferDecoratedKey + l.HeapBuffer + jvm.ByteArray(testKey))
	case HeapBuffers: // slab slice of a heap region: shallow buffer + remaining bytes
		key = float64(l.BufferDecoratedKey + l.HeapBuffer + testKey)
	case OffheapBuffers: // slab slice of a direct region: shallow buffer + remaining bytes
		key = float64(l.BufferDecoratedKey + l.DirectBuffer + testKey)
	case OffheapObjects:
		key = float64(l.NativeDecoratedKey)
	}
	avg := mapEntry + key + float64(l.LongToken)
	r := math.Ceil(avg)
	if avg-math.Floor(avg) < 0.05 {
		r = math.Floor(avg)
	}
	o := int64(r) - l.LongToken + l.AtomicBTreePartition + l.BTreePartitionData
	if t != OffheapObjects {
		o -= testKey
	}
	return o
}

// SkipListEntry is ConcurrentSkipListMap's bytes per entry: a Node and,
// with probability 1/4, an Index tower of geometric(1/2) height (2 on
// average), i.e. half an Index per entry.
func SkipListEntry(l *jvm.Layout) float64 {
	return float64(l.SkipListNode) + 0.5*float64(l.SkipListIndex)
}

// TokenHeap is Token.getHeapSize for a partitioner.
func TokenHeap(l *jvm.Layout, p Partitioner, keyLen int64) int64 {
	if p == ByteOrdered {
		return l.BytesTokenBase + jvm.ByteArray(keyLen)
	}
	return l.LongToken
}

// columnsHeap is RegularAndStaticColumns.unsharedHeapSize for the given
// column counts (NONE costs nothing).
func columnsHeap(l *jvm.Layout, regular, static int64) int64 {
	if regular == 0 && static == 0 {
		return 0
	}
	h := l.RegularAndStatic
	for _, n := range [...]int64{regular, static} {
		if n > 0 {
			h += l.Columns + jvm.BTreeBuilt(n)
		}
	}
	return h
}

// rangeTombstonesHeap is MutableDeletionInfo's ranges part for n ranges:
// RangeTombstoneList with arrays grown from 1 by 1.5x on every add (each
// memtable merge copies the list at its exact size, then adds), plus the
// bounds, which are cloned on heap whatever the allocation type.
func rangeTombstonesHeap(l *jvm.Layout, n, boundsHeap int64) int64 {
	if n == 0 {
		return 0
	}
	c := int64(1)
	if n > 1 {
		c = max(int64(math.Ceil(float64(n-1)*1.5)), n)
	}
	return l.RangeTombstoneList + boundsHeap + 2*jvm.RefArray(c) + jvm.Array(c, 8) + jvm.Array(c, 4)
}

// boundHeap is one range tombstone bound's unsharedHeapSize after a
// HeapCloner clone: BufferClusteringBound, its ByteBuffer[] and the
// buffers with their arrays.
func boundHeap(l *jvm.Layout, lens [][]byte) int64 {
	h := l.ClusteringBound + jvm.RefArray(int64(len(lens)))
	for _, v := range lens {
		h += l.HeapBuffer + jvm.ByteArray(int64(len(v)))
	}
	return h
}
