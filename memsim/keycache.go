package memsim

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/sstable"
	idx "github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/vint"
	"github.com/sstabletool/sstabletool/memsim/internal/jvm"
)

// KeyCache is the footprint of caching every partition of some sstables
// in the key cache, on heap as Cassandra 4.1 and 5.0 do, and off heap
// serialized (the OHC-based cache CASSANDRA-9738 proposes).
type KeyCache struct {
	Entries int64 `json:"entries"`
	// Indexed entries have a promoted index; IndexedOnHeap of them are
	// small enough (column_index_cache_size) to be held with their
	// IndexInfo objects, the others are shallow.
	Indexed       int64 `json:"indexed_entries"`
	IndexedOnHeap int64 `json:"indexed_on_heap_entries"`
	// OnHeap is what the key cache's weigher counts (CaffeineCache: the
	// key's and the value's unsharedHeapSize): KeyCacheKey with its key
	// byte[], and the RowIndexEntry: {position} for a partition without a
	// promoted index, IndexedEntry with its IndexInfos (each with its first
	// and last clustering and end-open marker) and their array, or
	// ShallowIndexedEntry.
	OnHeap         int64   `json:"on_heap_bytes"`
	OnHeapPerEntry float64 `json:"on_heap_per_entry"`
	// OffHeap is the serialized key (OHCProvider's key layout: tableId 16,
	// indexName as a 2-byte-length UTF string, a 4-byte key length and the
	// key), the serialized RowIndexEntry as Index.db holds it (unsigned
	// vint position, unsigned vint promoted index size, the promoted index)
	// and OHCEntryHeader per entry.
	OffHeap         int64   `json:"off_heap_bytes"`
	OffHeapPerEntry float64 `json:"off_heap_per_entry"`
	// OHCEntryHeader is the per-entry header of the OHC library's off-heap
	// map (org.caffinitas.ohc, linked implementation): a figure of that
	// library, not of Cassandra's source, included in OffHeap.
	OHCEntryHeader int64 `json:"ohc_entry_header_bytes"`
}

// ohcEntryHeader is OHC's off-heap entry header (Util.ENTRY_OFF_DATA of
// the linked implementation); it is not in Cassandra's source.
const ohcEntryHeader = 64

// columnIndexCacheSize is Config.column_index_cache_size's default (2 KiB
// in 4.1 and 5.0): a promoted index up to this size is deserialized into
// IndexInfo objects when its entry is read, a larger one stays shallow.
const columnIndexCacheSize = 2048

// keyCacheSizes are the shallow sizes of the key cache's classes.
type keyCacheSizes struct {
	keyCacheKey, rowIndexEntry, indexedEntry, shallowEntry, indexInfo, clusteringPrefix, deletionTime int64
}

func newKeyCacheSizes(l *jvm.Layout) keyCacheSizes {
	// Cassandra 5.0's IndexedEntry and ShallowIndexedEntry gained a
	// Version reference (io/sstable/format/big/RowIndexEntry.java).
	var version []int64
	if l.Cassandra != "4.1" {
		version = []int64{jvm.Ref}
	}
	ref := int64(jvm.Ref)
	return keyCacheSizes{
		// CacheKey{tableId, indexName} + KeyCacheKey{desc, key}
		keyCacheKey: jvm.Object(ref, ref, ref, ref),
		// RowIndexEntry (AbstractRowIndexEntry in 5.0){position long}
		rowIndexEntry: jvm.Object(8),
		// + {deletionTime ref, headerLength long, columnsIndex, offsets refs,
		//    indexedPartSize int, idxInfoSerializer ref}
		indexedEntry: jvm.Object(append([]int64{8, ref, 8, ref, ref, 4, ref}, version...)...),
		// + {indexFilePosition long, deletionTime ref, headerLength long,
		//    columnsIndexCount, indexedPartSize, offsetsOffset int,
		//    idxInfoSerializer ref, fieldsSerializedSize int}
		shallowEntry: jvm.Object(append([]int64{8, 8, ref, 8, 4, 4, 4, ref, 4}, version...)...),
		// IndexInfo{offset, width long; firstName, lastName, endOpenMarker refs}
		indexInfo: jvm.Object(8, 8, ref, ref, ref),
		// ArrayClustering / ArrayClusteringBound{kind, values refs}
		clusteringPrefix: jvm.Object(ref, ref),
		deletionTime:     l.DeletionTime,
	}
}

// prefixHeap is the unsharedHeapSize of an IndexInfo's deserialized first
// or last name: ArrayClustering counts its values' arrays, while
// ArrayClusteringBound and ArrayClusteringBoundary add the number of
// values instead of their bytes (as their unsharedHeapSize does).
func (z *keyCacheSizes) prefixHeap(p *clustering.Prefix) int64 {
	k := int64(len(p.Values))
	h := z.clusteringPrefix + jvm.RefArray(k)
	if p.Kind != clustering.Clustering {
		return h + k
	}
	for _, v := range p.Values {
		h += jvm.ByteArray(int64(len(v)))
	}
	return h
}

// entryHeap is the RowIndexEntry's unsharedHeapSize as the key cache holds
// an entry read from Index.db (RowIndexEntry.Serializer.deserialize), and
// whether it is held with its IndexInfos.
func (z *keyCacheSizes) entryHeap(e *idx.Entry) (int64, bool) {
	if !e.Indexed() {
		return z.rowIndexEntry, false
	}
	if e.PromotedSize > columnIndexCacheSize {
		return z.shallowEntry, false
	}
	h := z.indexedEntry + jvm.RefArray(int64(len(e.Blocks)))
	for i := range e.Blocks {
		b := &e.Blocks[i]
		h += z.indexInfo + z.prefixHeap(&b.FirstName) + z.prefixHeap(&b.LastName)
		if b.EndOpenMarker != nil {
			h += z.deletionTime
		}
	}
	return h, true
}

// KeyCacheFootprint reads every Index.db entry (promoted indexes
// included) of the sstables.
func KeyCacheFootprint(paths []string, jdk int, cassandra string) (KeyCache, error) {
	l, err := newLayout(Config{JDK: jdk, Cassandra: cassandra})
	if err != nil {
		return KeyCache{}, err
	}
	z := newKeyCacheSizes(&l)
	kc := KeyCache{OHCEntryHeader: ohcEntryHeader}
	for _, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			return KeyCache{}, err
		}
		if s.Version().IsBTI() {
			// BtiTableReader keeps no key cache: its trie lookups replace it.
			s.Close()
			continue
		}
		if s.Index() == nil {
			s.Close()
			return KeyCache{}, fmt.Errorf("%s: no Index.db to size the key cache from", p)
		}
		sc := idx.NewScanner(s.Index(), s.IndexCodec(), 0, true)
		for sc.Next() {
			e := sc.Entry()
			keyLen := int64(len(e.Key))
			heap, withInfos := z.entryHeap(e)
			kc.Entries++
			if e.Indexed() {
				kc.Indexed++
				if withInfos {
					kc.IndexedOnHeap++
				}
			}
			kc.OnHeap += z.keyCacheKey + jvm.ByteArray(keyLen) + heap
			value := int64(vint.UnsignedSize(uint64(e.Position))) + int64(vint.UnsignedSize(uint64(e.PromotedSize))) + int64(e.PromotedSize)
			kc.OffHeap += ohcEntryHeader + 16 + 2 + 4 + keyLen + value
		}
		err = sc.Err()
		s.Close()
		if err != nil {
			return KeyCache{}, err
		}
	}
	if kc.Entries > 0 {
		kc.OnHeapPerEntry = float64(kc.OnHeap) / float64(kc.Entries)
		kc.OffHeapPerEntry = float64(kc.OffHeap) / float64(kc.Entries)
	}
	return kc, nil
}
