// Package split writes the partitions of an sstable into new sstables,
// whole partitions each, in the source's order: cut into sstables of at
// most a size (sstablesplit, Cassandra's StandaloneSplitter), or with only
// the partitions a filter keeps (ScyllaDB's scylla sstable filter). Both
// write a copy elsewhere (Write) or replace the sstables of a stopped node
// in place through Cassandra's transaction log (InPlace, through
// internal/upgrade). The rows are decoded and encoded again as they are
// (rows.Encoder writes what Cassandra's writer wrote, byte for byte), the
// serialization header is the source's, and Statistics.db is collected anew
// from the rows of each output, with what rows cannot give carried from
// the source. Every output is verified (verify.SSTable) and compared with
// the source partition by partition, cell by cell, before it is committed.
package split

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
)

// MiB is the unit of sstablesplit's --size.
const MiB = 1 << 20

// DefaultSize is sstablesplit's default output size (DEFAULT_SSTABLE_SIZE,
// 50 MiB).
const DefaultSize = 50 * MiB

// MaxListed is how many dropped partitions a result names; the rest are
// counted (Result.DroppedNotListed).
const MaxListed = 1000

// Options controls a rewrite.
type Options struct {
	// MaxSize cuts the output into sstables whose Data.db takes at most
	// this many bytes on disk, a partition larger than that on its own
	// aside (it is alone in its sstable); 0 writes one sstable.
	MaxSize int64
	// Filter, when set, gives each sstable's filter (the keys parsed with
	// its key type, the tokens with its partitioner); nil writes every
	// partition.
	Filter func(src *sstable.SSTable) (*Filter, error)
	// To is the output's version; zero keeps the source's.
	To format.Version
	// ResetLevel writes level 0, as Cassandra's split does
	// (MaxSSTableSizeWriter(..., level 0)); otherwise the source's level
	// is kept (the outputs cover part of its key range, so leveled
	// compaction's order holds).
	ResetLevel bool
	// ColumnIndexSize is column_index_size in bytes for the index blocks
	// (0: the target format's default, 64 KiB big, 16 KiB BTI).
	ColumnIndexSize int
	// NoVerify skips the verification of the outputs.
	NoVerify bool
	// Access is how the source and the outputs are read.
	Access reader.Access
	// Progress, when set, hears the source's Data.db bytes done of all.
	Progress func(done, total int64)
}

// Result is what a rewrite of one sstable did.
type Result struct {
	Source string `json:"source"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Outputs are the sstables written, in token order (their Data.db
	// where they are after the commit).
	Outputs []Output `json:"outputs"`
	// Partitions counts the partitions written, Dropped those the filter
	// dropped and DroppedBytes their bytes in the source's uncompressed
	// Data.db.
	Partitions   int64 `json:"partitions"`
	Dropped      int64 `json:"partitions_dropped"`
	DroppedBytes int64 `json:"bytes_dropped"`
	// DroppedKeys names the dropped partitions (at most MaxListed; the
	// rest are counted in DroppedNotListed).
	DroppedKeys      []Partition `json:"dropped"`
	DroppedNotListed int64       `json:"dropped_not_listed,omitempty"`
	// Before is the source's files on disk, After the outputs'.
	Before int64 `json:"bytes_before"`
	After  int64 `json:"bytes_after"`
	// DataBefore is the source's Data.db on disk, what sstablesplit
	// compares with the size.
	DataBefore int64 `json:"data_bytes_before"`
	Verified   bool  `json:"verified"`
	// Unchanged: nothing to do, and nothing was written (Why says why:
	// smaller than the size, one partition, nothing dropped in place).
	Unchanged bool   `json:"unchanged,omitempty"`
	Why       string `json:"why,omitempty"`
	// Recovered says what was repaired in the output directory first
	// (leftovers of killed runs, see package writer).
	Recovered []string `json:"recovered,omitempty"`

	// named are the filter's keys found, for the report of keys not
	// found in any sstable.
	named [][]byte
}

// Named is the keys the filter named that this sstable holds.
func (r *Result) Named() [][]byte { return r.named }

// Output is one sstable written.
type Output struct {
	Data       string `json:"data"`
	Partitions int64  `json:"partitions"`
	// DataSize is Data.db on disk (what the size limits), Size every
	// component's bytes.
	DataSize int64  `json:"data_bytes"`
	Size     int64  `json:"bytes"`
	First    string `json:"first_key"`
	Last     string `json:"last_key"`
}

// Partition names a dropped partition.
type Partition struct {
	Key    string `json:"key"`
	KeyHex string `json:"key_hex"`
	Token  string `json:"token"`
	// Position and Size are its place in the source's uncompressed
	// Data.db.
	Position int64 `json:"position"`
	Size     int64 `json:"size"`
}

// outputs creates the sstables of one rewrite: in a staging directory
// (Write) or in the table directory through the transaction (InPlace).
type outputs interface {
	newSSTable(v format.Version) (format.Descriptor, writer.Output, error)
	// stagedDir is the directory the files are in until committed.
	stagedDir() string
}

// rewriter is one sstable being rewritten.
type rewriter struct {
	src    *sstable.SSTable
	o      Options
	to     format.Version
	filter *Filter
	outs   outputs
	res    *Result
	cfg    writer.Config

	w    *writer.SSTableWriter
	made []format.Descriptor
	cur  *Output
}

// open opens the source and settles the output's version and filter.
func open(srcPath string, o Options) (*rewriter, error) {
	src, err := sstable.Open(srcPath, sstable.Options{Access: o.Access})
	if err != nil {
		return nil, err
	}
	rw := &rewriter{src: src, o: o, to: o.To}
	if rw.to.Name == "" {
		rw.to = src.Version()
	}
	rw.res = &Result{Source: src.Path(format.ComponentData), From: src.Version().Name, To: rw.to.Name,
		Outputs: []Output{}, DroppedKeys: []Partition{}, Before: filesSize(src.Desc()), DataBefore: fileSize(src.Path(format.ComponentData))}
	if o.Filter != nil {
		if rw.filter, err = o.Filter(src); err != nil {
			src.Close()
			return nil, err
		}
	}
	st := src.Stats()
	if st.Stats == nil || st.Validation == nil || st.Header == nil {
		src.Close()
		return nil, fmt.Errorf("%s: Statistics.db lacks a component a rewrite needs", src.Path(format.ComponentStatistics))
	}
	return rw, nil
}

func (rw *rewriter) close() { rw.src.Close() }

// singlePartition reports whether the source holds one partition (which
// no split can cut), by its partition index; false when it cannot say.
func (rw *rewriter) singlePartition() bool {
	if p := rw.src.Partitions(); p != nil {
		return p.KeyCount == 1
	}
	if h := rw.src.Stats().Stats.PartitionSizes; h.Count() == 1 {
		return true
	}
	return false
}

// config is the one place the new sstables' settings are decided: the
// version, the source's compression and serialization header (rows are
// encoded against it as the source decoded them), its bloom filter
// chance and summary interval, Cassandra's default sampling for a new
// sstable, the source's TOC order, and the components
// writer.SSTableWriter writes for the version (the source's secondary
// index components, SAI's and SASI's, are not carried: they describe the
// source's Data.db).
func (rw *rewriter) config() error {
	src := rw.src
	st := src.Stats()
	h := *st.Header
	src.ApplyHeaderFixes(&h)
	sch := *src.Schema()
	sch.Version = rw.to
	minInterval := 128
	if sum, err := src.Summary(); err == nil && sum != nil && sum.MinIndexInterval > 0 && !src.SummaryRebuilt() {
		minInterval = sum.MinIndexInterval
	}
	comp := writer.CompressionFrom(src.Data().Info())
	if comp != nil && comp.MaxCompressedLength == 0 {
		comp.MaxCompressedLength = math.MaxInt32
	}
	fp := st.Validation.BloomFilterFPChance
	if fp == 0 {
		fp = 0.01
	}
	srcStats := st.Stats
	resetLevel := rw.o.ResetLevel
	rw.cfg = writer.Config{Version: rw.to, Header: &h, Schema: &sch, Partitioner: st.Validation.Partitioner,
		Compression: comp, ColumnIndexSize: rw.o.ColumnIndexSize, MinIndexInterval: minInterval,
		BloomFilterFPChance: fp, ExpectedKeys: rw.expectedKeys(), TOC: src.TOC(),
		FinishStatistics: func(s *stats.Statistics) {
			s.Stats.CarryFrom(srcStats)
			if resetLevel {
				s.Stats.Level = 0
			}
		}}
	return nil
}

// expectedKeys sizes each output's bloom filter before its keys arrive:
// for a split, the source's partitions over the number of sstables its
// size makes, as MaxSSTableSizeWriter estimates (estimatedTotalKeys /
// estimatedSSTables); for a filter, the partitions it may keep.
func (rw *rewriter) expectedKeys() int64 {
	total := rw.src.Stats().Stats.PartitionSizes.Count()
	if p := rw.src.Partitions(); p != nil {
		total = p.KeyCount
	}
	total = max(total, 1)
	if rw.o.MaxSize > 0 {
		return max(1, total/max(1, rw.res.DataBefore/rw.o.MaxSize))
	}
	if f := rw.filter; f != nil {
		if f.Keep != nil && len(f.Keep.Ranges) == 0 && len(f.Keep.Keys) > 0 {
			return min(total, int64(len(f.Keep.Keys)))
		}
		if f.Drop != nil {
			return max(1, total-int64(len(f.Drop.Keys)))
		}
	}
	return total
}

// span is where one partition lies in the source's uncompressed Data.db.
type span struct{ off, size int64 }

// sizes walks Data.db ahead of the rewrite on its own cursor (partition
// headers and row sizes only), so that each partition's size is known
// before it is written: the cut is made before a partition that would
// not fit. It stops when done is closed.
func (rw *rewriter) sizes(done <-chan struct{}) (<-chan span, <-chan error) {
	out := make(chan span, 4096)
	errc := make(chan error, 1)
	go func() {
		defer close(out)
		errc <- rw.src.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
			select {
			case <-done:
				return io.EOF
			default:
			}
			select {
			case out <- span{p.Offset, p.Size}:
				return nil
			case <-done:
				return io.EOF
			}
		})
	}()
	return out, errc
}

// run writes the partitions into as many sstables as the size makes.
func (rw *rewriter) run(outs outputs) (err error) {
	rw.outs = outs
	if err := rw.config(); err != nil {
		return err
	}
	defer func() {
		if err != nil && rw.w != nil {
			rw.w.Abort()
			rw.w = nil
		}
	}()
	src, o, res := rw.src, rw.o, rw.res
	total := src.Data().Length()
	var sizes <-chan span
	var sizeErr <-chan error
	if o.MaxSize > 0 {
		done := make(chan struct{})
		sizes, sizeErr = rw.sizes(done)
		// The walk ahead reads the source on its own goroutine: it must
		// have stopped before the caller closes the source (out is closed
		// last, when the walk has returned).
		defer func(sizes <-chan span) {
			close(done)
			for range sizes {
			}
		}(sizes)
	}
	// A partition written in another version may take a few bytes more
	// (a legacy partition header's deletion time is 12 bytes, oa's 1).
	var slack int64
	if rw.to.Name != src.Version().Name {
		slack = 16
	}
	part := src.Partitioner()
	dec := src.Decoder(0)
	var h rows.PartitionHeader
	var n int64
	for {
		err := dec.ReadPartitionHeader(&h)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var size int64 = -1
		if sizes != nil {
			sp, ok := <-sizes
			if !ok {
				if err := <-sizeErr; err != nil {
					return err
				}
				return fmt.Errorf("%s: the walk ahead ended before the partition at byte %d", res.Source, h.Offset)
			}
			if sp.off != h.Offset {
				return fmt.Errorf("%s: the walk ahead is at byte %d, the rewrite at %d", res.Source, sp.off, h.Offset)
			}
			size = sp.size
		}
		write, named := rw.filter.writes(part, h.Key)
		if named {
			res.named = append(res.named, slices.Clone(h.Key))
		}
		if !write {
			if err := dec.SkipRest(); err != nil {
				return err
			}
			rw.dropped(&h, dec.Pos()-h.Offset)
			continue
		}
		if rw.w != nil && o.MaxSize > 0 && rw.cur.Partitions > 0 && rw.w.DataSizeBound(size+slack, o.MaxSize) > o.MaxSize {
			if err := rw.finishOutput(); err != nil {
				return err
			}
		}
		if rw.w == nil {
			if err := rw.newOutput(); err != nil {
				return err
			}
		}
		if err := rw.copyPartition(&h, dec); err != nil {
			return err
		}
		res.Partitions++
		if n++; o.Progress != nil && n%1024 == 0 {
			o.Progress(dec.Pos(), total)
		}
	}
	if rw.w != nil {
		if err := rw.finishOutput(); err != nil {
			return err
		}
	}
	if o.Progress != nil {
		o.Progress(total, total)
	}
	return nil
}

// copyPartition writes the partition whose header was just read.
func (rw *rewriter) copyPartition(h *rows.PartitionHeader, dec *rows.Decoder) error {
	if err := rw.w.StartPartition(h.Key, h.Deletion); err != nil {
		return fmt.Errorf("%s: partition %s: %w", rw.res.Source, rw.keyText(h.Key), err)
	}
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			break
		}
		if u.Kind == rows.KindStaticRow {
			err = rw.w.AddStatic(u)
		} else {
			err = rw.w.Add(u)
		}
		if err != nil {
			return fmt.Errorf("%s: partition %s: %w", rw.res.Source, rw.keyText(h.Key), err)
		}
	}
	if err := rw.w.EndPartition(); err != nil {
		return err
	}
	key := rw.keyText(h.Key)
	if rw.cur.Partitions == 0 {
		rw.cur.First = key
	}
	rw.cur.Last = key
	rw.cur.Partitions++
	return nil
}

func (rw *rewriter) keyText(key []byte) string { return inspect.FormatKey(rw.src.KeyType(), key) }

func (rw *rewriter) dropped(h *rows.PartitionHeader, size int64) {
	res := rw.res
	res.Dropped++
	res.DroppedBytes += size
	if len(res.DroppedKeys) >= MaxListed {
		res.DroppedNotListed++
		return
	}
	res.DroppedKeys = append(res.DroppedKeys, Partition{Key: rw.keyText(h.Key), KeyHex: fmt.Sprintf("%x", h.Key),
		Token: rw.src.Partitioner().Token(h.Key).String(), Position: h.Offset, Size: size})
}

// newOutput starts the next sstable.
func (rw *rewriter) newOutput() error {
	desc, files, err := rw.outs.newSSTable(rw.to)
	if err != nil {
		return err
	}
	cfg := rw.cfg
	cfg.Generation = desc.Generation
	w, err := writer.NewSSTableWriterTo(files, desc.Dir, cfg)
	if err != nil {
		return err
	}
	rw.w = w
	rw.made = append(rw.made, desc)
	rw.res.Outputs = append(rw.res.Outputs, Output{Data: desc.Path(format.ComponentData)})
	rw.cur = &rw.res.Outputs[len(rw.res.Outputs)-1]
	return nil
}

// finishOutput closes the current sstable and checks its size: the cut
// was made so that it fits, and a bug that let it grow past the size
// must not go unnoticed.
func (rw *rewriter) finishOutput() error {
	written, err := rw.w.Close()
	rw.w = nil
	if err != nil {
		return err
	}
	for _, c := range written.Components {
		rw.cur.Size += c.Size
	}
	rw.cur.DataSize = written.Data.FileSize
	rw.res.After += rw.cur.Size
	if rw.o.MaxSize > 0 && rw.cur.Partitions > 1 && rw.cur.DataSize > rw.o.MaxSize {
		return fmt.Errorf("%s: output %s holds %d partitions in %d bytes of Data.db, more than the size %d (a bug: the cut is made before a partition that would not fit)",
			rw.res.Source, rw.cur.Data, rw.cur.Partitions, rw.cur.DataSize, rw.o.MaxSize)
	}
	return nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// filesSize is the bytes of an sstable's files.
func filesSize(d format.Descriptor) int64 {
	ents, err := os.ReadDir(d.Dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && !e.IsDir() && strings.HasPrefix(e.Name(), d.Prefix()) {
			n += fi.Size()
		}
	}
	return n
}
