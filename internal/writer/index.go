package writer

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/summary"
)

// IndexConfig describes the partition index an IndexWriter writes.
type IndexConfig struct {
	Version     format.Version
	Partitioner token.Partitioner
	// ClusteringTypes (BTI: byte-comparable clusterings) and
	// ClusteringFixed (big: Index.db's clustering prefixes), aligned with
	// the serialization header's clustering columns.
	ClusteringTypes []*cqltype.Type
	ClusteringFixed []int
	// ColumnIndexSize is column_index_size in bytes: a block closes after
	// the unfiltered that takes it to this size. 0: Cassandra's default for
	// the format (DefaultColumnIndexSize for big, bti.DefaultGranularity
	// for BTI).
	ColumnIndexSize int
	// ExpectedKeys, MinIndexInterval and SamplingLevel size and sample
	// Summary.db (big only); 0 means 128 and full sampling.
	ExpectedKeys     int64
	MinIndexInterval int
	SamplingLevel    int
}

// IndexComponents lists the components an IndexWriter writes for version
// v, the streamed ones first: Index.db and Summary.db for big format,
// Partitions.db and Rows.db for BTI.
func IndexComponents(v format.Version) []string {
	if v.IsBTI() {
		return []string{format.ComponentPartitions, format.ComponentRows}
	}
	return []string{format.ComponentIndex, format.ComponentSummary}
}

// DefaultGranularity is column_index_size's default for version v's format.
func DefaultGranularity(v format.Version) int {
	if v.IsBTI() {
		return bti.DefaultGranularity
	}
	return DefaultColumnIndexSize
}

// Component is a component built in memory, written whole at the end.
type Component struct {
	Name  string
	Bytes []byte
}

// IndexWriter writes an sstable's partition index, partition by partition
// as Data.db is written: Index.db entries with promoted index blocks and
// Summary.db samples (big format, as BigFormatPartitionWriter and
// BigTableWriter do), or Partitions.db and Rows.db tries (BTI, as
// BtiFormatPartitionWriter and BtiTableWriter do). Both cut a partition's
// unfiltereds into blocks by the same rule: a block closes after the
// unfiltered that takes it to ColumnIndexSize bytes, the last at the
// partition end, and only partitions with two blocks or more are indexed.
//
// The caller reports each partition with StartPartition, its non-static
// unfiltereds with Add (positions in the output Data.db), and
// EndPartition; or, for big format only, a ready entry with AddEntry.
type IndexWriter struct {
	cfg  IndexConfig
	size int64 // granularity

	// big
	idx     io.Writer
	idxPos  int64
	codec   *index.Codec
	sb      *summary.Builder
	idxBuf  []byte
	blocks  []index.Block
	blkOpen bool
	blk     index.Block
	lastPfx clustering.Prefix // the last unfiltered's clustering, in lastBuf
	lastBuf []byte
	open    *deletiontime.DeletionTime

	// BTI
	parts  *bti.PartitionsWriter
	rowsW  *bti.RowsWriter
	cutter *bti.BlockCutter
	bc     []byte

	key      []byte
	pos      int64
	deletion deletiontime.DeletionTime
	inPart   bool
	lastEnd  int64
	last     IndexedPartition
	markers  []deletiontime.DeletionTime
}

// NewIndexWriter writes the index of version cfg.Version: to primary
// (Index.db, or Partitions.db) and, for BTI, rowsOut (Rows.db).
func NewIndexWriter(cfg IndexConfig, primary, rowsOut io.Writer) (*IndexWriter, error) {
	if cfg.ColumnIndexSize <= 0 {
		cfg.ColumnIndexSize = DefaultGranularity(cfg.Version)
	}
	if cfg.Partitioner == nil {
		return nil, errors.New("writer: IndexConfig needs a partitioner")
	}
	w := &IndexWriter{cfg: cfg, size: int64(cfg.ColumnIndexSize)}
	if cfg.Version.IsBTI() {
		if rowsOut == nil {
			return nil, errors.New("writer: a BTI index needs a Rows.db writer")
		}
		if len(cfg.ClusteringTypes) != len(cfg.ClusteringFixed) {
			return nil, fmt.Errorf("writer: %d clustering types for %d clustering columns", len(cfg.ClusteringTypes), len(cfg.ClusteringFixed))
		}
		w.parts = bti.NewPartitionsWriter(primary, cfg.Partitioner)
		w.rowsW = bti.NewRowsWriter(rowsOut, cfg.Version)
		w.cutter = bti.NewBlockCutter(w.size)
		return w, nil
	}
	if cfg.MinIndexInterval <= 0 {
		cfg.MinIndexInterval = 128
	}
	if cfg.SamplingLevel <= 0 {
		cfg.SamplingLevel = summary.BaseSamplingLevel
	}
	sb, err := summary.NewBuilder(cfg.ExpectedKeys, cfg.MinIndexInterval, cfg.SamplingLevel)
	if err != nil {
		return nil, err
	}
	w.cfg = cfg
	w.idx, w.sb = primary, sb
	w.codec = &index.Codec{Version: cfg.Version, ClusteringFixed: cfg.ClusteringFixed}
	return w, nil
}

// StartPartition begins the partition of key at Data.db position pos.
func (w *IndexWriter) StartPartition(key []byte, pos int64, deletion deletiontime.DeletionTime) {
	w.key = append(w.key[:0], key...)
	w.pos, w.deletion = pos, deletion
	w.inPart, w.lastEnd = true, -1
	if w.cutter != nil {
		w.cutter.Reset()
		return
	}
	w.blocks, w.blkOpen, w.open = w.blocks[:0], false, nil
}

// Add reports the partition's next row or range tombstone marker (a
// static row is ignored: it belongs to the header) at start..end, offsets
// from the partition's start in Data.db. u need only stay valid during
// the call.
func (w *IndexWriter) Add(u *rows.Unfiltered, start, end int64) error {
	if !w.inPart {
		return errors.New("writer: index Add outside a partition")
	}
	if u.Kind == rows.KindStaticRow {
		return nil
	}
	if end <= start || (w.lastEnd >= 0 && start != w.lastEnd) {
		return fmt.Errorf("writer: unfiltered at %d..%d of partition %x does not follow the previous one ending at %d", start, end, w.key, w.lastEnd)
	}
	w.lastEnd = end
	if w.cutter != nil {
		var err error
		w.bc, err = w.cutter.AddUnfilteredAt(w.bc, w.cfg.ClusteringTypes, u, start, end)
		if err != nil {
			return fmt.Errorf("writer: partition %x: %w", w.key, err)
		}
		return nil
	}
	pfx := clustering.Prefix{Kind: clustering.Clustering, Values: u.Clustering}
	if u.Kind == rows.KindMarker {
		pfx = u.Bound
		switch {
		case u.Bound.Kind.IsBoundary():
			d := u.StartDeletion
			w.open = &d
		case u.Bound.Kind.IsStart():
			d := u.Deletion
			w.open = &d
		default:
			w.open = nil
		}
	}
	if !w.blkOpen {
		w.blk = index.Block{FirstName: pfx.Clone(), Offset: start}
		w.blkOpen = true
	}
	if end-w.blk.Offset >= w.size {
		w.closeBlock(pfx.Clone(), end)
		return nil
	}
	// Kept for a block closed by the partition's end, when u is gone.
	w.lastBuf = w.lastBuf[:0]
	w.lastPfx.Kind = pfx.Kind
	w.lastPfx.Values = w.lastPfx.Values[:0]
	for _, v := range pfx.Values {
		if v == nil {
			w.lastPfx.Values = append(w.lastPfx.Values, nil)
			continue
		}
		at := len(w.lastBuf)
		w.lastBuf = append(w.lastBuf, v...)
		w.lastPfx.Values = append(w.lastPfx.Values, w.lastBuf[at:len(w.lastBuf):len(w.lastBuf)])
	}
	return nil
}

func (w *IndexWriter) closeBlock(last clustering.Prefix, end int64) {
	b := w.blk
	b.LastName, b.Width = last, end-b.Offset
	if w.open != nil {
		d := *w.open
		b.EndOpenMarker = &d
	}
	w.blocks = append(w.blocks, b)
	w.blkOpen = false
}

// EndPartition closes the partition: headerLength is where its first
// non-static unfiltered starts (header and static row), size its whole
// length with the end-of-partition byte.
func (w *IndexWriter) EndPartition(headerLength, size int64) error {
	if !w.inPart {
		return errors.New("writer: index EndPartition outside a partition")
	}
	w.inPart = false
	if w.cutter != nil {
		// BTI's last block ends where the unfiltereds do, before the
		// end-of-partition byte.
		end := size - 1
		blocks, indexed, err := w.cutter.Finish(end)
		if err != nil {
			return fmt.Errorf("writer: partition %x: %w", w.key, err)
		}
		w.last = IndexedPartition{Indexed: indexed, Deletion: w.deletion, Markers: w.last.Markers[:0]}
		if !indexed {
			return w.parts.AddData(w.key, w.pos)
		}
		w.markers = w.markers[:0]
		for _, b := range blocks {
			w.markers = append(w.markers, b.OpenDeletion)
		}
		for i := range w.markers {
			var m *deletiontime.DeletionTime
			if !w.markers[i].IsLive() {
				m = &w.markers[i]
			}
			w.last.Markers = append(w.last.Markers, m)
		}
		rp, err := w.rowsW.AddPartition(w.key, w.pos, w.deletion, blocks, end)
		if err != nil {
			return fmt.Errorf("writer: partition %x: %w", w.key, err)
		}
		return w.parts.AddRowIndex(w.key, rp)
	}
	if w.blkOpen {
		// A big block closed by the partition's end counts the
		// end-of-partition byte.
		w.closeBlock(w.lastPfx.Clone(), size)
	}
	e := index.Entry{Key: w.key, Position: w.pos}
	w.last = IndexedPartition{Indexed: len(w.blocks) > 1, Deletion: w.deletion, Markers: w.last.Markers[:0]}
	if w.last.Indexed {
		e.HeaderLength, e.Deletion, e.Blocks = headerLength, w.deletion, w.blocks
		for i := range w.blocks {
			w.last.Markers = append(w.last.Markers, w.blocks[i].EndOpenMarker)
		}
	}
	return w.AddEntry(&e)
}

// AddEntry writes a ready Index.db entry (big format only): a converter
// that moved a source entry's blocks to their new positions instead of
// cutting them anew.
func (w *IndexWriter) AddEntry(e *index.Entry) error {
	if w.codec == nil {
		return fmt.Errorf("writer: %s has no Index.db entries", w.cfg.Version.Name)
	}
	var err error
	if w.idxBuf, err = w.codec.Append(w.idxBuf[:0], e); err != nil {
		return fmt.Errorf("writer: index entry of key %x: %w", e.Key, err)
	}
	if _, err := w.idx.Write(w.idxBuf); err != nil {
		return err
	}
	w.sb.Add(e.Key, w.idxPos)
	w.idxPos += int64(len(w.idxBuf))
	return nil
}

// Finish completes the streamed components and returns those built in
// memory (Summary.db for big format, nothing for BTI).
func (w *IndexWriter) Finish() ([]Component, error) {
	if w.inPart {
		return nil, errors.New("writer: index Finish inside a partition")
	}
	if w.cutter != nil {
		if _, err := w.parts.Finish(); err != nil {
			return nil, err
		}
		return nil, w.rowsW.Flush()
	}
	s, err := w.sb.Build()
	if err != nil {
		return nil, err
	}
	return []Component{{Name: format.ComponentSummary, Bytes: s.Encode()}}, nil
}

// tocOrder is the order Cassandra 5.0 lists components in TOC.txt (a hash
// set's order, as the oa and da fixtures show), for components a writer
// adds without a source TOC to follow.
var tocOrder = []string{format.ComponentData, format.ComponentStatistics, format.ComponentDigest, format.ComponentTOC,
	format.ComponentCompressionInfo, format.ComponentCRC, format.ComponentFilter,
	format.ComponentIndex, format.ComponentSummary, format.ComponentPartitions, format.ComponentRows}

// TOCOrder sorts components as Cassandra 5.0 lists them in TOC.txt; names
// it does not know go last, in their order.
func TOCOrder(components []string) []string {
	out := slices.Clone(components)
	rank := func(c string) int {
		if i := slices.Index(tocOrder, c); i >= 0 {
			return i
		}
		return len(tocOrder)
	}
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// IndexedPartition is what the index holds for the partition EndPartition
// last closed: whether it is indexed (a promoted index, or a Rows.db
// entry), its DeletionTime stored there, and per block the deletion open
// at the block's edge that the index stores (a big block's end-open
// marker, a BTI block's open deletion; nil where none is stored).
type IndexedPartition struct {
	Indexed  bool
	Deletion deletiontime.DeletionTime
	Markers  []*deletiontime.DeletionTime
}

// Last describes the partition EndPartition last closed. The slice is
// reused by the next partition.
func (w *IndexWriter) Last() IndexedPartition { return w.last }
