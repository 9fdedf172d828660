package scrub

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/filter"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// indexBuild rebuilds the partition index (Index.db and Summary.db, or
// Partitions.db and Rows.db) and Filter.db from a walk of Data.db, fed
// partition by partition as the walk decodes them.
type indexBuild struct {
	iw        *writer.IndexWriter
	bf        *filter.BloomFilter
	start     int64
	headerLen int64
	// primary and rows are the streamed index files when they are built
	// in memory (during check, before anything may be written).
	primary, rows *capped
}

// newIndexBuild builds what p rebuilds (the index, the filter or both)
// for keys partitions, the index streamed into primary (and rowsOut for
// BTI).
func (sc *scrubber) newIndexBuild(p *rebuildPlan, keys int64, primary, rowsOut io.Writer) (*indexBuild, error) {
	b := &indexBuild{}
	if p.filter != "" {
		var err error
		if b.bf, err = filter.New(max(keys, 1), sc.src.Stats().Validation.BloomFilterFPChance); err != nil {
			return nil, fmt.Errorf("%s: Filter.db: %w", sc.dataPath, err)
		}
	}
	if p.index != "" {
		minInterval, level := sc.sampling()
		var err error
		if b.iw, err = writer.NewIndexWriter(writer.IndexConfig{Version: sc.from, Partitioner: sc.src.Partitioner(),
			ClusteringTypes: sc.src.ClusteringTypes(), ClusteringFixed: sc.src.Schema().ClusteringFixed,
			ColumnIndexSize: sc.o.ColumnIndexSize, ExpectedKeys: keys, MinIndexInterval: minInterval, SamplingLevel: level},
			primary, rowsOut); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// needsUnfiltereds says whether the build needs every unfiltered (the
// index does; the filter needs only keys).
func (b *indexBuild) needsUnfiltereds() bool { return b.iw != nil }

func (b *indexBuild) partition(h *rows.PartitionHeader) {
	if b.bf != nil {
		b.bf.Add(h.Key)
	}
	if b.iw != nil {
		b.iw.StartPartition(h.Key, h.Offset, h.Deletion)
		b.start, b.headerLen = h.Offset, -1
	}
}

func (b *indexBuild) unfiltered(u *rows.Unfiltered) error {
	if b.iw == nil || u.Kind == rows.KindStaticRow {
		return nil
	}
	if b.headerLen < 0 {
		b.headerLen = u.Offset - b.start
	}
	return b.iw.Add(u, u.Offset-b.start, u.Offset+u.Size-b.start)
}

// end closes the partition that ends at Data.db position end.
func (b *indexBuild) end(end int64) error {
	if b.iw == nil {
		return nil
	}
	size := end - b.start
	if b.headerLen < 0 {
		b.headerLen = size - 1
	}
	return b.iw.EndPartition(b.headerLen, size)
}

// finish completes the build: the filter and the components built in
// memory go into built.
func (b *indexBuild) finish(v format.Version, built map[string][]byte) error {
	if b.bf != nil {
		built[format.ComponentFilter] = b.bf.Encode(v.HasOldBloomFilterFormat)
	}
	if b.iw == nil {
		return nil
	}
	extra, err := b.iw.Finish()
	if err != nil {
		return err
	}
	for _, c := range extra {
		built[c.Name] = c.Bytes
	}
	comps := writer.IndexComponents(v)
	if b.primary != nil {
		built[comps[0]] = b.primary.Bytes()
	}
	if b.rows != nil {
		built[comps[1]] = b.rows.Bytes()
	}
	return nil
}

// maxIndexInMemory bounds an index built in memory during check; a larger
// one is built by a second walk, into its files. (A variable for the test
// of that walk.)
var maxIndexInMemory = 64 << 20

var errIndexTooBig = errors.New("scrub: the index is too large to build in memory")

// capped is a buffer that refuses to grow past maxIndexInMemory.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > maxIndexInMemory {
		return 0, errIndexTooBig
	}
	return c.Buffer.Write(p)
}
