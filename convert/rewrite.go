package convert

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/filter"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/summary"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// rewrite produces every component of the converted sstable into out, in
// named steps: check the source, open the output streams, convert
// Statistics.db, copy the partitions (relinking Data.db and indexing it),
// finish the streams, then write the small components and TOC.txt and
// account for the sizes.
func rewrite(src *sstable.SSTable, o Options, out outputSink) (*Result, error) {
	if o.To.Name == "" {
		return nil, errors.New("convert: no target version")
	}
	rw := &rewriter{src: src, o: o, out: out, from: src.Version(), to: o.To, dataPath: src.Path(format.ComponentData)}
	rw.res = &Result{Source: rw.dataPath, From: rw.from.Name, To: rw.to.Name}
	var content *rows.Digest
	if o.Verify {
		content = new(rows.Digest)
	}
	if !rw.from.IsBTI() && !rw.to.IsBTI() && o.ColumnIndexSize <= 0 {
		// Index.db's blocks are moved, not cut anew: the statistics are
		// collected by the walk that relinks (copySegmented).
		rw.collected = &collection{merged: true, content: content}
	} else {
		rw.collected = collectStats(src, content)
	}
	defer rw.collected.stop()
	for _, step := range []func() error{rw.check, rw.openOutputs, rw.convertStatistics, rw.copyPartitions, rw.finishStreams, rw.writeComponents} {
		if err := step(); err != nil {
			if rw.dw != nil {
				rw.dw.Abort()
			}
			return rw.res, err
		}
	}
	return rw.res, nil
}

// rewriter is the state rewrite's steps share.
type rewriter struct {
	src      *sstable.SSTable
	o        Options
	out      outputSink
	from, to format.Version
	dataPath string
	res      *Result

	// openOutputs
	dw         *writer.DataWriter
	dataDone   func() (int64, error)
	indexComps []string
	idxDone    func() (int64, error)
	rowsDone   func() (int64, error)
	iw         *writer.IndexWriter
	bf         *filter.BloomFilter
	// convertStatistics
	st *stats.Statistics
	// collected gathers, beside the copy, the bounds and counts of the
	// rows written (writeComponents takes them).
	collected *collection
	// copyPartitions
	rl          *relinker
	cut         *blockCutter
	scan        *index.Scanner
	events      []event
	segCut      sstable.Cutter // where verify's walk of the output will cut it
	histMiss    bool
	pos         int64 // where the last partition copied ends in the source
	first, last []byte
	// finishStreams
	dr         *writer.DataResult
	extra      []writer.Component
	sizesAfter map[string]int64
}

// check refuses what cannot be converted before anything is written.
func (rw *rewriter) check() error {
	src, from, to := rw.src, rw.from, rw.to
	if !from.IsBTI() && src.Index() == nil {
		return fmt.Errorf("%s: Index.db is missing; convert needs every component", rw.dataPath)
	}
	if src.Stats().Stats == nil || src.Stats().Validation == nil || src.Stats().Header == nil {
		return fmt.Errorf("%s: Statistics.db lacks a component convert needs", src.Path(format.ComponentStatistics))
	}
	if !to.HasUIntDeletionTime && src.Stats().Stats.MaxLocalDeletionTime != stats.NoDeletionTime &&
		src.Stats().Stats.MaxLocalDeletionTime > stats.LegacyMaxDeletionTime {
		// Rows, markers and cells store deletion times as deltas that a
		// legacy reader widens into a signed int; rewriting those bodies is
		// out of scope, so refuse rather than write values read back wrong.
		return fmt.Errorf("%s: holds deletion times up to %d, past the 2038 limit of %s inside row bodies; not convertible", rw.dataPath, src.Stats().Stats.MaxLocalDeletionTime, to.Name)
	}
	return nil
}

// openOutputs starts Data.db (with the source's compression unless asked
// otherwise), the index writer and the bloom filter.
func (rw *rewriter) openOutputs() error {
	src, o, to := rw.src, rw.o, rw.to
	comp := outputCompression(src, o.Compression, o.Uncompressed)
	dataW, dataDone, err := rw.out.create(format.ComponentData)
	if err != nil {
		return err
	}
	rw.dataDone = dataDone
	if rw.dw, err = writer.NewDataWriter(dataW, comp, to.HasMaxCompressedLength); err != nil {
		return err
	}
	// Summary.db (or Partitions.db and Rows.db) and Filter.db are derived
	// from the keys, so they are built anew from what is written, whether
	// or not the source has them: the summary with the source's sampling
	// (Cassandra's defaults without one), the filter with Statistics.db's
	// bloom_filter_fp_chance, sized for the exact partition count as
	// Cassandra sizes it on flush.
	keys, err := countKeys(src)
	if err != nil {
		return err
	}
	minInterval, level, err := summarySampling(src)
	if err != nil {
		return err
	}
	rw.indexComps = writer.IndexComponents(to)
	idxW, idxDone, err := rw.out.create(rw.indexComps[0])
	if err != nil {
		return err
	}
	rw.idxDone = idxDone
	var rowsW io.Writer
	rw.rowsDone = func() (int64, error) { return 0, nil }
	if to.IsBTI() {
		if rowsW, rw.rowsDone, err = rw.out.create(rw.indexComps[1]); err != nil {
			return err
		}
	}
	if rw.iw, err = writer.NewIndexWriter(writer.IndexConfig{Version: to, Partitioner: src.Partitioner(),
		ClusteringTypes: src.ClusteringTypes(), ClusteringFixed: src.Schema().ClusteringFixed,
		ColumnIndexSize: o.ColumnIndexSize, ExpectedKeys: keys, MinIndexInterval: minInterval, SamplingLevel: level}, idxW, rowsW); err != nil {
		return err
	}
	if rw.bf, err = filter.New(keys, src.Stats().Validation.BloomFilterFPChance); err != nil {
		return fmt.Errorf("%s: Filter.db: %w", src.Path(format.ComponentStatistics), err)
	}
	return nil
}

// convertStatistics converts Statistics.db field by field (stats.Convert)
// and settles the serialization header's minima (headerRefusal).
func (rw *rewriter) convertStatistics() error {
	src, from, to, res := rw.src, rw.from, rw.to, rw.res
	why := headerRefusal(src.Stats().Header, from, to)
	unused := minimaUnused(src.Stats().Stats)
	if why != "" && unused {
		// No row body holds a deletion time or TTL (Statistics.db says
		// so, and verification re-checks every cell): the minima are never
		// added to anything, so the target gets sane ones.
		why = ""
	}
	if why != "" {
		if !rw.o.estimating {
			return fmt.Errorf("%s: not convertible: %s", rw.dataPath, why)
		}
		res.Refusals = append(res.Refusals, why)
	}
	st, losses, err := src.Stats().Convert(to)
	if err != nil {
		return err
	}
	// Row bodies are copied as they are, so the header must say how they
	// are stored: a 3.x frozen UDT recorded as UserType(...) is written as
	// the FrozenType(...) the decoder read it as.
	src.ApplyHeaderFixes(st.Header)
	res.Losses = losses
	if headerRefusal(src.Stats().Header, from, to) != "" {
		// Unused minima (see above) are written as the epochs; for an
		// estimate of a refused sstable this is what a scrubbed header
		// would hold: one vint byte each.
		if unused {
			res.Losses = append(res.Losses, stats.Loss{Field: "Header.MinLocalDeletionTime/MinTTL",
				Reason: fmt.Sprintf("stored minima (deltas %d and %d) that %s cannot hold are unused (no deletion time or TTL in Data.db); written as the epochs", src.Stats().Header.RawMinLocalDeletionTime, src.Stats().Header.RawMinTTL, to.Name)})
		}
		st.Header.MinLocalDeletionTime, st.Header.MinTTL = stats.DeletionTimeEpoch, 0
		st.Header.HasRaw = false
	}
	rw.st = st
	return nil
}

// copyPartitions relinks Data.db partition by partition and gives each
// partition to the index writer: with the source's promoted index moved
// (relinkEntry), or blocks cut anew from the rows (blockCutter). Where
// blocks are moved, the partitions are relinked on every core by the walk
// that collects the statistics (copySegmented); otherwise one relinker
// copies them in order (copyOne).
func (rw *rewriter) copyPartitions() error {
	src, o, from, to, res, dataPath := rw.src, rw.o, rw.from, rw.to, rw.res, rw.dataPath
	rw.rl = &relinker{src: src.Data().Cursor(0), schema: src.Schema(), dst: rw.dw,
		to: to.DeletionTimeLayout(), capDT: o.CapDeletionTimes || o.estimating,
		file: dataPath, counts: &res.Counts}
	// Index blocks are cut anew from the rows whenever a trie index is
	// read or written (a big promoted index is cut at big's granularity,
	// a BTI sstable has none to move) or a granularity is asked for; a
	// big-to-big conversion otherwise moves the source's blocks, so that
	// Index.db keeps Cassandra's exact cut.
	if from.IsBTI() || to.IsBTI() || o.ColumnIndexSize > 0 {
		rw.cut = &blockCutter{dec: src.Decoder(0), src: src, iw: rw.iw, counts: &res.Counts}
	}
	if !from.IsBTI() {
		rw.scan = index.NewScanner(src.Index(), src.IndexCodec(), 0, true)
	}
	// Where verify's walk of the output will cut it (Index.db's partition
	// starts, every segment's worth): the comparison with the source
	// starts each segment there (compare.go).
	rw.segCut = sstable.Cutter{Size: sstable.DefaultSegmentSize}
	total := src.Data().Length()
	if rw.collected.merged {
		switch err := rw.copySegmented(); {
		case err == errIndexEnded:
			// Reported below, as after copyOne's last partition.
		case err != nil:
			return err
		case rw.scan.Next():
			// An entry past the last partition, which copyOne would have
			// taken for the next one.
			return corrupt.New(src.Path(format.ComponentIndex), "Index.db", rw.scan.EntryPos(),
				fmt.Sprintf("no entry past the last partition (Data.db ends at byte %d)", rw.pos), fmt.Errorf("an entry for byte %d", rw.scan.Entry().Position))
		}
	} else {
		for {
			more, err := rw.copyOne(total)
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	res.reflagged = res.reflagged || rw.rl.reflagged
	if rw.scan != nil {
		if err := rw.scan.Err(); err != nil {
			return fmt.Errorf("%s: %w", src.Path(format.ComponentIndex), err)
		}
	}
	if rw.pos != total {
		return corrupt.New(dataPath, "Data.db", rw.pos, "no partition beyond those Index.db lists", fmt.Errorf("%d bytes left", total-rw.pos))
	}
	if from.IsBTI() && src.Partitions() != nil && src.Partitions().KeyCount != res.Partitions {
		return corrupt.New(src.Path(format.ComponentPartitions), format.ComponentPartitions, src.Partitions().KeysPos,
			fmt.Sprintf("a key count equal to the %d partitions of Data.db", res.Partitions), fmt.Errorf("footer says %d", src.Partitions().KeyCount))
	}
	if rw.histMiss {
		res.Losses = append(res.Losses, stats.Loss{Field: "Stats.PartitionSizes",
			Reason: "the source histogram does not count every partition's size; sizes were added for the rewritten partitions anyway"})
	}
	if o.Progress != nil {
		o.Progress(total, total)
	}
	return nil
}

// copyOne relinks the partition at the relinker's source position, before
// end, with its Index.db entry; it reports false when there is none left
// (Index.db ends, or without one, the position reaches end).
func (rw *rewriter) copyOne(end int64) (bool, error) {
	rl, scan := rw.rl, rw.scan
	var e *index.Entry
	var wantKey []byte
	if scan != nil {
		if !scan.Next() {
			return false, nil
		}
		e = scan.Entry()
		if e.Position != rl.src.Pos() {
			return false, corrupt.New(rw.src.Path(format.ComponentIndex), "Index.db", scan.EntryPos(),
				fmt.Sprintf("the next partition's Data.db position %d", rl.src.Pos()), fmt.Errorf("entry says %d", e.Position))
		}
		wantKey = e.Key
	} else if rl.src.Pos() >= end {
		return false, nil
	}
	pr, evs, err := rl.partition(wantKey, rw.events)
	rw.events = evs
	if err != nil {
		return false, err
	}
	if rw.cut != nil {
		if err := rw.cut.partition(&pr, rw.events); err != nil {
			return false, err
		}
	} else if err := rw.addEntry(e, &pr, rw.events, scan.EntryPos()); err != nil {
		return false, err
	}
	rw.took(&pr)
	return true, nil
}

// addEntry gives the index writer the source's entry e (at Index.db byte
// entryPos) of a relinked partition, relinked (relinkEntry).
func (rw *rewriter) addEntry(e *index.Entry, pr *partitionResult, events []event, entryPos int64) error {
	if err := rw.rl.relinkEntry(e, pr, events, entryPos); err != nil {
		return err
	}
	if err := rw.iw.AddEntry(e); err != nil {
		return fmt.Errorf("%s: %w", rw.dataPath, err)
	}
	return nil
}

// took accounts for a partition written: verify's segment starts, the
// filter, the partition sizes, the key range, the count and progress.
func (rw *rewriter) took(pr *partitionResult) {
	res := rw.res
	if rw.segCut.At(pr.newStart) {
		res.segments = append(res.segments, boundary{a: pr.oldStart, b: pr.newStart, n: res.Partitions})
	}
	rw.bf.Add(pr.key)
	sizes := rw.st.Stats.PartitionSizes
	if !sizes.Remove(pr.oldSize) {
		rw.histMiss = true
	}
	sizes.Add(pr.newSize)
	if rw.first == nil {
		rw.first = append([]byte(nil), pr.key...)
	}
	rw.last = append(rw.last[:0], pr.key...)
	rw.pos = pr.oldStart + pr.oldSize
	res.Partitions++
	if rw.o.Progress != nil && res.Partitions%1024 == 0 {
		rw.o.Progress(rw.pos, rw.src.Data().Length())
	}
}

// finishStreams closes Data.db and the index, collecting their sizes.
func (rw *rewriter) finishStreams() error {
	var err error
	if rw.dr, err = rw.dw.Finish(); err != nil {
		return err
	}
	rw.sizesAfter = map[string]int64{}
	if rw.sizesAfter[format.ComponentData], err = rw.dataDone(); err != nil {
		return err
	}
	if rw.extra, err = rw.iw.Finish(); err != nil {
		return err
	}
	if rw.sizesAfter[rw.indexComps[0]], err = rw.idxDone(); err != nil {
		return err
	}
	rowsSize, err := rw.rowsDone()
	if err != nil {
		return err
	}
	if rw.to.IsBTI() {
		rw.sizesAfter[rw.indexComps[1]] = rowsSize
	}
	return nil
}

// writeComponents finishes Statistics.db with what was written (the
// compression ratio, the key range), writes the small components and
// TOC.txt (writer.SmallComponents, writer.TOCFor), and accounts for every
// component's size before and after.
func (rw *rewriter) writeComponents() error {
	src, from, to, res, dr, st := rw.src, rw.from, rw.to, rw.res, rw.dr, rw.st
	if err := rw.takeCollected(); err != nil {
		return err
	}
	st.Stats.CompressionRatio = dr.CompressionRatio()
	if to.HasKeyRange && rw.first != nil {
		st.Stats.FirstKey, st.Stats.LastKey = rw.first, rw.last
	}
	if to.HasKeyRange && !from.HasKeyRange {
		res.Losses = slices.DeleteFunc(res.Losses, func(l stats.Loss) bool { return l.Field == "Stats.FirstKey/LastKey" })
	}
	statsBytes, err := st.Encode(to)
	if err != nil {
		return fmt.Errorf("%s: encoding Statistics.db: %w", rw.dataPath, err)
	}
	res.stats = st
	small, err := writer.SmallComponents(to, statsBytes, rw.extra, rw.bf.Encode(to.HasOldBloomFilterFormat), dr)
	if err != nil {
		return fmt.Errorf("%s: %w", rw.dataPath, err)
	}
	written := []string{format.ComponentData}
	written = append(written, rw.indexComps[0])
	if to.IsBTI() {
		written = append(written, rw.indexComps[1])
	}
	for _, c := range small {
		if err := rw.writeWhole(c.Name, c.Bytes); err != nil {
			return err
		}
		written = append(written, c.Name)
	}
	toc := writer.TOCFor(src.TOC(), written)
	if err := rw.writeWhole(format.ComponentTOC, writer.TOCText(toc)); err != nil {
		return err
	}
	for _, name := range toc {
		res.Components = append(res.Components, Component{Name: name, Before: fileSize(src.Path(name)), After: rw.sizesAfter[name]})
	}
	// The source's index components that the target format has no place
	// for (Index.db and Summary.db for a trie-indexed target, and back)
	// are gone after the conversion.
	for _, name := range writer.IndexComponents(from) {
		if !slices.Contains(toc, name) && src.HasComponent(name) {
			res.Dropped = append(res.Dropped, Component{Name: name, Before: fileSize(src.Path(name))})
		}
	}
	res.Index = Component{Name: strings.Join(writer.IndexComponents(from), "+") + " -> " + strings.Join(rw.indexComps, "+")}
	for _, name := range writer.IndexComponents(from) {
		res.Index.Before += fileSize(src.Path(name))
	}
	for _, name := range rw.indexComps {
		res.Index.After += rw.sizesAfter[name]
	}
	res.DataUncompressed = Component{Name: "Data.db (uncompressed)", Before: src.Data().Length(), After: dr.Length}
	res.IndexFiles = Component{Name: "SAI and SASI files"}
	for _, f := range src.IndexFiles() {
		res.IndexFiles.Before += max(f.Size, 0)
	}
	res.CompressionInfo, res.Checksums = dr.Info, dr.Checksums
	if rw.o.Verify {
		res.keys = rw.bf
	}
	return nil
}

// takeCollected writes the bounds and counts Cassandra's writer would
// collect from the rows written (the rows are the source's, their bodies
// copied), not the source's: sstableupgrade collects fresh statistics, and
// a writer other than Cassandra's may have stored wider ones (ScyllaDB's
// timestamps of Long.MIN_VALUE to Long.MAX_VALUE, a row count with an
// empty static row). For an sstable Cassandra wrote they are the same
// values. Where they differ, Result.StatisticsRecollected says how.
func (rw *rewriter) takeCollected() error {
	data, err := rw.collected.wait()
	if err != nil {
		return err
	}
	src, st, res := rw.src, rw.st, rw.res
	res.content = rw.collected.content
	res.StatisticsRecollected = stats.CompareCollected(src.Stats().Stats, data, rw.from, src.ClusteringTypes())
	res.Losses = slices.DeleteFunc(res.Losses, func(l stats.Loss) bool { return stats.IsCollectedField(l.Field) })
	res.Losses = append(res.Losses, st.Stats.TakeCollected(data, rw.to)...)
	return nil
}

// collection is sstable.CollectStats running beside the copy.
type collection struct {
	// merged: collected by copySegmented, done when the copy is.
	merged  bool
	done    chan struct{}
	stopped atomic.Bool
	data    *stats.Stats
	content *rows.Digest // nil: not taken
	err     error
}

// collectStats starts collecting src's rows' statistics on every core,
// and the digest of its content into content when not nil.
func collectStats(src *sstable.SSTable, content *rows.Digest) *collection {
	c := &collection{done: make(chan struct{}), content: content}
	go func() {
		defer close(c.done)
		c.data, c.err = src.CollectStats(sstable.SegmentOptions{}, c.stopped.Load, content)
	}()
	return c
}

// wait returns what was collected.
func (c *collection) wait() (*stats.Stats, error) {
	if c.merged {
		return c.data, c.err
	}
	<-c.done
	return c.data, c.err
}

// stop ends the collection early (a failed rewrite) and waits for it: the
// source is closed after the rewrite returns.
func (c *collection) stop() {
	if c.merged {
		return
	}
	c.stopped.Store(true)
	<-c.done
}

// writeWhole writes one component built in memory and records its size.
func (rw *rewriter) writeWhole(name string, b []byte) error {
	w, done, err := rw.out.create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	n, err := done()
	if err != nil {
		return err
	}
	rw.sizesAfter[name] = n
	return nil
}

// outputCompression is Data.db's compression in a rewrite: src's (the
// source's, or a merge's newest input's) unless another is asked for, or
// none (uncompressed).
func outputCompression(src *sstable.SSTable, asked *writer.Compression, uncompressed bool) *writer.Compression {
	if uncompressed {
		return nil
	}
	comp := writer.CompressionFrom(src.Data().Info())
	if asked != nil {
		comp = asked
	}
	if comp != nil && comp.MaxCompressedLength == 0 {
		comp.MaxCompressedLength = 1<<31 - 1
	}
	return comp
}

// countKeys counts Index.db's entries (heads only): the filter and the
// summary are sized for the partition count before the keys arrive.
func countKeys(src *sstable.SSTable) (int64, error) {
	if src.Version().IsBTI() {
		if src.Partitions() != nil {
			// Partitions.db's footer counts them; the conversion checks
			// the count against Data.db's partitions.
			return src.Partitions().KeyCount, nil
		}
		// The tries are derived from Data.db like Summary.db and
		// Filter.db: without them, Data.db is counted by a skim.
		return countPartitions(src)
	}
	scan := index.NewScanner(src.Index(), src.IndexCodec(), 0, false)
	var n int64
	for scan.Next() {
		n++
	}
	if err := scan.Err(); err != nil {
		return n, fmt.Errorf("%s: %w", src.Path(format.ComponentIndex), err)
	}
	return n, nil
}

// countPartitions walks Data.db by sizes alone.
func countPartitions(src *sstable.SSTable) (int64, error) {
	d := src.Decoder(0)
	var h rows.PartitionHeader
	var n int64
	for {
		err := d.ReadPartitionHeader(&h)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err == nil {
			_, err = d.SkimRest()
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// defaultMinIndexInterval is min_index_interval's default (TableParams).
const defaultMinIndexInterval = 128

// summarySampling is the source Summary.db's min index interval and
// sampling level, or what Cassandra writes a new sstable with (the table
// default interval, full sampling) when the source has none.
func summarySampling(src *sstable.SSTable) (minInterval, level int, err error) {
	if !src.HasComponent(format.ComponentSummary) {
		return defaultMinIndexInterval, summary.BaseSamplingLevel, nil
	}
	sum, err := src.Summary()
	if err != nil {
		return 0, 0, err
	}
	return sum.MinIndexInterval, sum.SamplingLevel, nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
