package bti

import (
	"fmt"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
	"github.com/sstabletool/sstabletool/internal/format/index"
)

// BlocksFromIndexInfo turns the promoted index of a big-format Index.db
// entry into BTI index blocks. BigFormatPartitionWriter cuts blocks by the
// same rule as BTI's partition writer (a block closes at the unfiltered
// that reaches column_index_size), so when the sstable was written with the
// granularity the BTI sstable will have, its blocks are the same and a
// converter need not rescan Data.db. (Cassandra's defaults differ: 64 KiB
// for big, 16 KiB for BTI; the legacy fixtures use 4 KiB for both.)
//
// A big block records the deletion open at its end; a BTI block the one
// open at its start, so each block takes the previous one's.
//
// The end RowsWriter.AddPartition needs is not the last block's offset plus
// width: a big block closed at the partition's end also counts the
// end-of-partition byte, one closed by its size does not. Take it from the
// partition's size instead: the next partition's position (or Data.db's
// length) minus this one's, minus one.
func BlocksFromIndexInfo(types []*cqltype.Type, blocks []index.Block) ([]IndexBlock, error) {
	out := make([]IndexBlock, 0, len(blocks))
	open := deletiontime.Live
	for i, b := range blocks {
		first, err := bytecomparable.AppendClustering(nil, types, b.FirstName.Kind, b.FirstName.Values)
		if err != nil {
			return nil, fmt.Errorf("bti: block %d first clustering: %w", i, err)
		}
		last, err := bytecomparable.AppendClustering(nil, types, b.LastName.Kind, b.LastName.Values)
		if err != nil {
			return nil, fmt.Errorf("bti: block %d last clustering: %w", i, err)
		}
		out = append(out, IndexBlock{First: first, Last: last, Offset: b.Offset, OpenDeletion: open})
		open = deletiontime.Live
		if b.EndOpenMarker != nil {
			open = *b.EndOpenMarker
		}
	}
	return out, nil
}
