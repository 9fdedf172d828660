// Package jvm holds the per-object heap sizes Cassandra's own accounting
// uses (utils/ObjectSizes.java via jamm's MemoryMeter) on a 64-bit HotSpot
// JVM with compressed oops: 12-byte object headers, 4-byte references,
// 8-byte alignment and 16-byte array headers (12-byte header + 4-byte
// length, so a byte[n] is align(16+n)).
//
// Every size is derived from the Java class's field list (the "shape" in
// each comment), so the figures move with --jdk and --cassandra exactly
// where the Java classes do: a heap ByteBuffer grew a MemorySegment field in
// JDK 17, and CASSANDRA-14227 (commit 1adbea5a06) turned BTreeRow's
// minLocalDeletionTime, Cell/LivenessInfo local deletion times and
// EncodingStats.minLocalDeletionTime from int into long.
package jvm

import "fmt"

const (
	Header      = 12 // object header with compressed class pointers
	Ref         = 4  // compressed oop
	Align       = 8
	ArrayHeader = 16 // header + int length
)

// AlignUp rounds n up to the object alignment.
func AlignUp(n int64) int64 { return (n + Align - 1) &^ (Align - 1) }

// Object is the shallow size of an object whose fields take the given bytes.
func Object(fields ...int64) int64 {
	s := int64(Header)
	for _, f := range fields {
		s += f
	}
	return AlignUp(s)
}

// Array is the size of an array of n elements of elem bytes each.
func Array(n, elem int64) int64 { return AlignUp(ArrayHeader + n*elem) }

// RefArray is ObjectSizes.sizeOfReferenceArray(n).
func RefArray(n int64) int64 { return Array(n, Ref) }

// Layout is the set of class sizes for one JDK and Cassandra version.
type Layout struct {
	JDK       int    // 11 or 17
	Cassandra string // "4.1" (before CASSANDRA-14227) or "5.0"

	// java.nio buffers (shallow): Buffer{mark,position,limit,capacity int;
	// address long; JDK17+: segment ref} + ByteBuffer{hb ref, offset int,
	// isReadOnly, bigEndian, nativeByteOrder boolean} and, for direct
	// buffers, MappedByteBuffer{fd ref; JDK17+: isSync boolean} +
	// DirectByteBuffer{cleaner, att ref}.
	HeapBuffer   int64
	DirectBuffer int64
	// DirectBufferDeep is measureDeep(ByteBuffer.allocateDirect(0)): the
	// buffer, its jdk.internal.ref.Cleaner (Reference's 4 refs + next, prev,
	// thunk) and the Deallocator (address, size long; capacity int).
	DirectBufferDeep int64

	LongToken      int64 // Murmur3Partitioner.LongToken{token long}
	BytesTokenBase int64 // ByteOrderedPartitioner.BytesToken{token byte[]}, without the array

	BufferDecoratedKey int64 // DecoratedKey{token ref} + {key ref}
	NativeDecoratedKey int64 // DecoratedKey{token ref} + {peer long}

	AtomicBTreePartition int64 // AbstractBTreePartition{partitionKey} + {wasteTracker int; allocator, ref, metadata refs}
	BTreePartitionData   int64 // {columns, deletionInfo, tree, staticRow, stats refs}
	RegularAndStatic     int64 // RegularAndStaticColumns{statics, regulars refs}
	Columns              int64 // Columns{columns ref, complexIdx int}
	EncodingStats        int64 // {minTimestamp long, minLocalDeletionTime int|long, minTTL int}

	BTreeRow          int64 // {clustering, primaryKeyLivenessInfo, deletion, btree refs; minLocalDeletionTime int|long}
	LivenessInfo      int64 // {timestamp long}
	ExpiringLiveness  int64 // + {ttl int, localExpirationTime int|long}
	DeletionTime      int64 // {markedForDeleteAt long, localDeletionTime int}
	RowDeletion       int64 // Row.Deletion.EMPTY_SIZE measures a DeletionTime (sic), see Row.java
	BufferClustering  int64 // AbstractOnHeapClusteringPrefix{kind, values refs}
	NativeClustering  int64 // {peer long}
	BufferCell        int64 // ColumnData{column} + {timestamp long, ttl int, localDeletionTime int, value, path refs}
	NativeCell        int64 // ColumnData{column} + {peer long}
	CellPath          int64 // SingleItemCellPath{value ref}
	ComplexColumnData int64 // ColumnData{column} + {cells, complexDeletion refs}

	MutableDeletionInfo int64 // {partitionDeletion, ranges refs}
	RangeTombstoneList  int64 // {comparator, starts, ends, markedAts, delTimes refs; boundaryHeapSize long; size int}
	ClusteringBound     int64 // BufferClusteringBound = AbstractOnHeapClusteringPrefix{kind, values}

	// java.util.concurrent.ConcurrentSkipListMap: Node{key, val, next};
	// Index{node, down, right}; a node gets an index tower with
	// probability 1/4 whose height is geometric(1/2), so 0.5 Index per entry.
	SkipListNode  int64
	SkipListIndex int64

	// The hash-ordered map (CASSANDRA-7282, not in Cassandra): a
	// split-ordered list node {hash long; key, value, next refs}, used for
	// entries and bucket sentinels alike.
	HashOrderedNode int64

	// cells' dataSize() width of localDeletionTime (TypeSizes.sizeof of an
	// int before CASSANDRA-14227, of a long after) and of an expiring
	// LivenessInfo's localExpirationTime.
	DeletionTimeDataSize int64
}

// NewLayout returns the layout for a JDK (11 or 17) and Cassandra version
// ("4.1" or "5.0").
func NewLayout(jdk int, cassandra string) (Layout, error) {
	if jdk != 11 && jdk != 17 {
		return Layout{}, fmt.Errorf("jdk %d: want 11 or 17", jdk)
	}
	var ldt int64
	switch cassandra {
	case "4.1":
		ldt = 4
	case "5.0":
		ldt = 8
	default:
		return Layout{}, fmt.Errorf("cassandra %q: want 4.1 or 5.0", cassandra)
	}
	var segment, isSync int64
	if jdk >= 17 {
		segment, isSync = Ref, 1
	}
	l := Layout{JDK: jdk, Cassandra: cassandra}
	buffer := []int64{4, 4, 4, 4, 8, segment} // Buffer
	byteBuffer := []int64{Ref, 4, 1, 1, 1}    // ByteBuffer
	l.HeapBuffer = Object(append(buffer, byteBuffer...)...)
	direct := append(append(append([]int64{}, buffer...), byteBuffer...), Ref, isSync, Ref, Ref)
	l.DirectBuffer = Object(direct...)
	cleaner := Object(Ref, Ref, Ref, Ref, Ref, Ref, Ref)
	deallocator := Object(8, 8, 4)
	l.DirectBufferDeep = l.DirectBuffer + cleaner + deallocator

	l.LongToken = Object(8)
	l.BytesTokenBase = Object(Ref)
	l.BufferDecoratedKey = Object(Ref, Ref)
	l.NativeDecoratedKey = Object(Ref, 8)
	l.AtomicBTreePartition = Object(Ref, 4, Ref, Ref, Ref)
	l.BTreePartitionData = Object(Ref, Ref, Ref, Ref, Ref)
	l.RegularAndStatic = Object(Ref, Ref)
	l.Columns = Object(Ref, 4)
	l.EncodingStats = Object(8, ldt, 4)

	l.BTreeRow = Object(Ref, Ref, Ref, Ref, ldt)
	l.LivenessInfo = Object(8)
	l.ExpiringLiveness = Object(8, 4, ldt)
	l.DeletionTime = Object(8, 4)
	l.RowDeletion = l.DeletionTime
	l.BufferClustering = Object(Ref, Ref)
	l.NativeClustering = Object(8)
	l.BufferCell = Object(Ref, 8, 4, 4, Ref, Ref)
	l.NativeCell = Object(Ref, 8)
	l.CellPath = Object(Ref)
	l.ComplexColumnData = Object(Ref, Ref, Ref)

	l.MutableDeletionInfo = Object(Ref, Ref)
	l.RangeTombstoneList = Object(Ref, Ref, Ref, Ref, Ref, 8, 4)
	l.ClusteringBound = Object(Ref, Ref)

	l.SkipListNode = Object(Ref, Ref, Ref)
	l.SkipListIndex = Object(Ref, Ref, Ref)
	l.HashOrderedNode = Object(8, Ref, Ref, Ref)
	l.DeletionTimeDataSize = ldt
	return l, nil
}

// ByteArray is the size of a byte[n].
func ByteArray(n int64) int64 { return Array(n, 1) }

// HeapBufferExcludingData is ObjectSizes.sizeOnHeapExcludingDataOf for a
// heap buffer that owns its whole array (not a slab slice).
func (l *Layout) HeapBufferExcludingData(n int64) int64 {
	return l.HeapBuffer + ByteArray(n) - n
}

// BTreeLeaf is the size of a BTree leaf holding n items: leaves are
// Object[n | 1] (odd lengths, see BTree.buildLeaf).
func BTreeLeaf(n int64) int64 {
	if n == 0 {
		return 0 // BTree.EMPTY_LEAF is shared
	}
	return RefArray(n | 1)
}

// BTreeBranch is one branch node with k keys: Object[2k+2] (keys, k+1
// children, the size map) plus the int[k+1] size map.
func BTreeBranch(k int64) int64 { return RefArray(2*k+2) + Array(k+1, 4) }

// BTreeBuilt approximates BTree.sizeOnHeapOf of a tree of n items built in
// bulk: full 31-item leaves under branches of up to 32 children. Trees of
// at most 31 items are a single leaf and exact.
func BTreeBuilt(n int64) int64 {
	if n <= 31 {
		return BTreeLeaf(n)
	}
	var size int64
	level := n
	for level > 31 {
		nodes := (level + 31) / 32 // each node holds ~31 items plus one separator upward
		per := level/nodes - 1
		if level == n {
			size += nodes * BTreeLeaf(per)
		} else {
			size += nodes * BTreeBranch(per)
		}
		level = nodes - 1
	}
	return size + BTreeBranch(level)
}
