package memsim

import (
	"io"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/memsim/jvm"
)

// KeyCache is the footprint of caching every partition key of some
// sstables in the key cache, on heap as Cassandra does today and off heap
// serialized (the OHC-style cache CASSANDRA-9738 proposes).
type KeyCache struct {
	Entries int64 `json:"entries"`
	// OnHeap is what the key cache's weigher counts: KeyCacheKey
	// (CacheKey{tableId, indexName} + {desc, key}) with its key byte[], plus
	// the RowIndexEntry value {position long}.
	OnHeap         int64   `json:"on_heap_bytes"`
	OnHeapPerEntry float64 `json:"on_heap_per_entry"`
	// OffHeap is OHC's per-entry header plus the serialized key (the
	// OHCProvider key layout: tableId 16, indexName as a 2-byte-length UTF
	// string, a 4-byte key length and the key) and the serialized
	// RowIndexEntry (unsigned vint position, vint 0 for "no promoted index").
	OffHeap         int64   `json:"off_heap_bytes"`
	OffHeapPerEntry float64 `json:"off_heap_per_entry"`
}

// ohcEntryHeader is OHC's off-heap entry header (org.caffinitas.ohc
// linked implementation, Util.ENTRY_OFF_DATA); it is not in Cassandra's
// source.
const ohcEntryHeader = 64

// keyCacheEntry returns the on-heap and off-heap bytes of one entry.
func keyCacheEntry(l *jvm.Layout, keyLen int, position int64) (on, off int64) {
	keyCacheKey := jvm.Object(jvm.Ref, jvm.Ref, jvm.Ref, jvm.Ref)
	rowIndexEntry := jvm.Object(8)
	on = keyCacheKey + jvm.ByteArray(int64(keyLen)) + rowIndexEntry
	off = ohcEntryHeader + 16 + 2 + 4 + int64(keyLen) + int64(uvintSize(uint64(position))) + 1
	return on, off
}

// uvintSize is the width of Cassandra's unsigned vint (VIntCoding).
func uvintSize(v uint64) int {
	n := 1
	for v >= 1<<(7*n) && n < 9 {
		n++
	}
	return n
}

// KeyCacheFootprint reads every partition header of the sstables.
func KeyCacheFootprint(paths []string, jdk int, cassandra string) (KeyCache, error) {
	l, err := newLayout(Config{JDK: jdk, Cassandra: cassandra})
	if err != nil {
		return KeyCache{}, err
	}
	var kc KeyCache
	for _, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			return KeyCache{}, err
		}
		dec := s.Decoder(0)
		var h rows.PartitionHeader
		for {
			err := dec.ReadPartitionHeader(&h)
			if err == io.EOF {
				break
			}
			if err == nil {
				err = dec.SkipRest()
			}
			if err != nil {
				err = s.WrapDataError(err)
				s.Close()
				return KeyCache{}, err
			}
			on, off := keyCacheEntry(&l, len(h.Key), h.Offset)
			kc.Entries++
			kc.OnHeap += on
			kc.OffHeap += off
		}
		s.Close()
	}
	if kc.Entries > 0 {
		kc.OnHeapPerEntry = float64(kc.OnHeap) / float64(kc.Entries)
		kc.OffHeapPerEntry = float64(kc.OffHeap) / float64(kc.Entries)
	}
	return kc, nil
}
