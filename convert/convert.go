// Package convert rewrites big-format sstables from one version to another
// (nb/nc and older to oa, and back), and estimates exactly what such a
// rewrite saves without writing anything.
//
// Only the DeletionTime layout differs between the legacy versions and oa
// where Data.db and Index.db are concerned (CASSANDRA-18648): partition
// headers, Index.db entries and promoted index blocks' end-open markers are
// re-encoded, every position behind them moves, and every row's "previous
// unfiltered size" is recomputed; row bodies are copied byte for byte.
// Statistics.db is converted field by field (stats.Convert) with the
// partition size histogram and the compression ratio recomputed from what
// was written. Summary.db, Filter.db, CRC.db, Digest.crc32 and TOC.txt are
// built anew from what is written, present in the source or not: the
// summary with the source Summary.db's sampling (Cassandra's defaults
// without one), the filter from the keys with Statistics.db's
// bloom_filter_fp_chance, sized for the exact partition count.
package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/filter"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/summary"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
)

// Place is where a DeletionTime is stored outside row bodies.
type Place int

const (
	PlacePartitionHeader Place = iota // Data.db partition headers
	PlaceIndexEntry                   // Index.db entries with a promoted index
	PlaceIndexBlock                   // IndexInfo end-open markers
	placeCount
)

func (p Place) String() string {
	return [...]string{"partition headers", "index entries", "index blocks"}[p]
}

// Counts counts the DeletionTimes a conversion re-encoded, by place.
type Counts struct {
	Live    [placeCount]int64
	NonLive [placeCount]int64
	// BlocksWithoutMarker counts promoted index blocks with no end-open
	// marker (no DeletionTime stored).
	BlocksWithoutMarker int64
	// Capped counts values changed to fit a legacy layout
	// (Options.CapDeletionTimes).
	Capped int64
}

func (c *Counts) add(p Place, dt deletiontime.DeletionTime) {
	if dt.IsLive() {
		c.Live[p]++
	} else {
		c.NonLive[p]++
	}
}

// Add sums other into c.
func (c *Counts) Add(o *Counts) {
	for i := range c.Live {
		c.Live[i] += o.Live[i]
		c.NonLive[i] += o.NonLive[i]
	}
	c.BlocksWithoutMarker += o.BlocksWithoutMarker
	c.Capped += o.Capped
}

// Options controls a conversion.
type Options struct {
	To format.Version
	// Compression overrides the source's compression; nil keeps it.
	// Uncompressed forces an uncompressed Data.db (with CRC.db).
	Compression  *writer.Compression
	Uncompressed bool
	// CapDeletionTimes caps values a legacy layout cannot hold instead of
	// failing (the count is in Result.Counts.Capped).
	CapDeletionTimes bool
	// Verify re-reads the written sstable before it is moved into place:
	// verify.SSTable must pass and its content must equal the source's
	// partition by partition, row by row, cell by cell.
	Verify bool
	// Access is how the source (and the output, when verifying) is read.
	Access reader.Access
	// ColumnIndexSize is column_index_size in bytes for index blocks cut
	// anew: 0 means the target format's default (64 KiB big, 16 KiB BTI).
	// Blocks are cut anew from the rows when either side is BTI or this is
	// set; a big-to-big conversion otherwise keeps the source's blocks.
	ColumnIndexSize int
	// Progress, when set, is called with source Data.db bytes done.
	Progress func(done, total int64)

	// estimating is set by Estimate: what Convert would refuse is noted in
	// Result.Refusals and the estimate goes on with the values capped.
	estimating bool

	// crash injection for tests (see writer.Staging.CrashAfter).
	crashBytes   int64
	crashRenames int
	crash        bool
}

// Component is one component's size before and after.
type Component struct {
	Name   string `json:"name"`
	Before int64  `json:"before"`
	After  int64  `json:"after"`
}

// Result describes one conversion (or estimate).
type Result struct {
	Source     string      `json:"source"`
	Output     string      `json:"output,omitempty"` // Data.db path, "" for estimates
	From       string      `json:"from"`
	To         string      `json:"to"`
	Partitions int64       `json:"partitions"`
	Components []Component `json:"components"`
	// Dropped are the source's index components the target format has
	// no place for (Index.db and Summary.db converting to da, Partitions.db
	// and Rows.db from it): After is 0. Not in Components, which are the
	// output's files.
	Dropped []Component `json:"dropped_components,omitempty"`
	// Index sums the partition index components before (the source's:
	// Index.db and Summary.db, or Partitions.db and Rows.db) and after
	// (the target's), whatever the formats.
	Index Component `json:"index"`
	// DataUncompressed is Data.db's uncompressed length before and after:
	// exactly the DeletionTime bytes (and size vints) the rewrite saves,
	// whatever the compressor does with them. Not part of Components,
	// which are on-disk files.
	DataUncompressed Component `json:"data_uncompressed"`
	// CompressionInfo (compressed Data.db) or Checksums (uncompressed) is
	// the chunk metadata written, for callers that explain
	// CompressionInfo.db's or CRC.db's size field by field.
	CompressionInfo *reader.CompressionInfo `json:"-"`
	Checksums       *reader.ChunkChecksums  `json:"-"`
	Counts          Counts                  `json:"deletion_times"`
	Losses          []stats.Loss            `json:"statistics_losses,omitempty"`
	Verified        bool                    `json:"verified"`
	Problems        []string                `json:"problems,omitempty"`
	// Refusals (estimates only) say why Convert would refuse this sstable
	// as it stands; the sizes then assume --cap-deletion-times and a
	// scrubbed serialization header.
	Refusals []string `json:"refusals,omitempty"`
	// Recovered says what was repaired in the output directory before
	// writing: leftovers of killed runs removed or completed (see package
	// writer).
	Recovered []string          `json:"recovered,omitempty"`
	stats     *stats.Statistics // the written Statistics, for tests
	// cut is the first partition past the middle of the source, where
	// verification splits its comparison in two.
	cut boundary
}

// Component returns the sizes of one component (zero if absent).
func (r *Result) Component(name string) Component {
	for _, c := range r.Components {
		if c.Name == name {
			return c
		}
	}
	return Component{Name: name}
}

// sink receives the output components: staged files, or counters.
type sink interface {
	create(name string) (io.Writer, func() (int64, error), error)
}

type countingSink struct{}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func (countingSink) create(string) (io.Writer, func() (int64, error), error) {
	c := &counter{}
	return c, func() (int64, error) { return c.n, nil }, nil
}

type stagingSink struct {
	st     *writer.Staging
	prefix string
}

func (s stagingSink) create(name string) (io.Writer, func() (int64, error), error) {
	f, err := s.st.Create(s.prefix + name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() (int64, error) { n := f.Pos(); return n, f.Close() }, nil
}

// Convert rewrites the sstable at srcPath (any component) in version
// o.To into outDir, crash-safely (see package writer). It returns the
// result even on a verification failure, with the error.
func Convert(srcPath, outDir string, o Options) (*Result, error) {
	src, err := sstable.Open(srcPath, sstable.Options{Access: o.Access})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	outDesc := src.Desc().WithVersion(o.To)
	st, err := writer.NewStaging(outDir, outDesc.Prefix())
	if err != nil {
		return nil, err
	}
	if o.crash {
		st.CrashAfter(o.crashBytes, o.crashRenames)
	}
	committed := false
	defer func() {
		if !committed {
			st.Abort()
		}
	}()
	res, err := rewrite(src, o, stagingSink{st: st, prefix: outDesc.Prefix()})
	if res != nil {
		res.Recovered = st.Recovered()
	}
	if err != nil {
		return res, err
	}
	if o.Verify {
		staged := outDesc.WithDir(st.Dir()).Path(format.ComponentData)
		if err := verifyOutput(src, staged, o, res); err != nil {
			return res, err
		}
		res.Verified = true
	}
	if err := st.Commit(); err != nil {
		return res, err
	}
	committed = true
	res.Output = outDesc.WithDir(outDir).Path(format.ComponentData)
	return res, nil
}

// Estimate computes what Convert would write, without writing anything:
// every component is produced in memory and only counted, Data.db really
// recompressed chunk by chunk.
func Estimate(srcPath string, o Options) (*Result, error) {
	src, err := sstable.Open(srcPath, sstable.Options{Access: o.Access})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	o.estimating = true
	res, err := rewrite(src, o, countingSink{})
	if res != nil && res.Counts.Capped > 0 && !o.CapDeletionTimes {
		res.Refusals = append(res.Refusals, fmt.Sprintf("%d DeletionTimes outside partition bodies cannot be written as %s unchanged (convert refuses them without --cap-deletion-times)", res.Counts.Capped, o.To.Name))
	}
	return res, err
}

// headerRefusal says why the serialization header's EncodingStats minima
// cannot carry over to version to: row bodies are copied as stored, as
// deltas from these minima, so the target must store the same minima and
// read every delta the same way. It cannot when a minimum is more than an
// int away from its epoch (a negative local deletion time left by a
// Cassandra 3.x/4.x overflow, CASSANDRA-14092), or when the source's
// release cast a stored minimum with (int) and the target's would not.
// "" when they carry over.
// minimaUnused reports whether Statistics.db records no local deletion
// time and no TTL at all, so no row body holds a delta from the header's
// EncodingStats minima for them.
func minimaUnused(st *stats.Stats) bool {
	return st != nil && st.MinLocalDeletionTime == stats.NoDeletionTime && st.MaxLocalDeletionTime == stats.NoDeletionTime &&
		st.MinTTL == 0 && st.MaxTTL == 0
}

func headerRefusal(h *stats.Header, from, to format.Version) string {
	if h == nil {
		return ""
	}
	var notes []string
	if from.CheckedIntVInts != to.CheckedIntVInts {
		notes = h.CastMinima()
	}
	if d := h.MinLocalDeletionTime - stats.DeletionTimeEpoch; d != int64(int32(d)) {
		notes = append(notes, fmt.Sprintf("EncodingStats min local deletion time %d is more than an int from the epoch, which %s cannot store (negative: deletion times that overflowed, CASSANDRA-14092)", h.MinLocalDeletionTime, to.Name))
	}
	if h.MinTTL != int64(int32(h.MinTTL)) {
		notes = append(notes, fmt.Sprintf("EncodingStats min TTL %d does not fit an int", h.MinTTL))
	}
	if len(notes) == 0 {
		return ""
	}
	return fmt.Sprintf("%s; row bodies are copied as deltas from it, so run sstablescrub on the node first (it rewrites them)", strings.Join(notes, "; "))
}

// rewrite produces every component of the converted sstable into out, in
// named steps: check the source, open the output streams, convert
// Statistics.db, copy the partitions (relinking Data.db and indexing it),
// finish the streams, then write the small components and TOC.txt and
// account for the sizes.
func rewrite(src *sstable.SSTable, o Options, out sink) (*Result, error) {
	if o.To.Name == "" {
		return nil, errors.New("convert: no target version")
	}
	rw := &rewriter{src: src, o: o, out: out, from: src.Version(), to: o.To, dataPath: src.Path(format.ComponentData)}
	rw.res = &Result{Source: rw.dataPath, From: rw.from.Name, To: rw.to.Name}
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
	out      sink
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
	// copyPartitions
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
	comp := writer.CompressionFrom(src.Data().Info())
	if o.Compression != nil {
		comp = o.Compression
	}
	if o.Uncompressed {
		comp = nil
	}
	if comp != nil && comp.MaxCompressedLength == 0 {
		comp.MaxCompressedLength = 1<<31 - 1
	}
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

// copyPartitions relinks Data.db partition by partition (relinker) and
// gives each partition to the index writer: with the source's promoted
// index moved, or blocks cut anew from the rows (blockCutter).
func (rw *rewriter) copyPartitions() error {
	src, o, from, to, res, dataPath := rw.src, rw.o, rw.from, rw.to, rw.res, rw.dataPath
	sizes := rw.st.Stats.PartitionSizes
	rl := &relinker{src: src.Data().Cursor(0), schema: src.Schema(), dst: rw.dw,
		to: to.DeletionTimeLayout(), capDT: o.CapDeletionTimes || o.estimating,
		file: dataPath, counts: &res.Counts}
	// Index blocks are cut anew from the rows whenever a trie index is
	// read or written (a big promoted index is cut at big's granularity,
	// a BTI sstable has none to move) or a granularity is asked for; a
	// big-to-big conversion otherwise moves the source's blocks, so that
	// Index.db keeps Cassandra's exact cut.
	var cut *blockCutter
	if from.IsBTI() || to.IsBTI() || o.ColumnIndexSize > 0 {
		cut = &blockCutter{dec: src.Decoder(0), src: src, iw: rw.iw, counts: &res.Counts}
	}
	var scan *index.Scanner
	if !from.IsBTI() {
		scan = index.NewScanner(src.Index(), src.IndexCodec(), 0, true)
	}
	var (
		events   []event
		total    = src.Data().Length()
		histMiss bool
	)
	for {
		var e *index.Entry
		var wantKey []byte
		if scan != nil {
			if !scan.Next() {
				break
			}
			e = scan.Entry()
			if e.Position != rl.src.Pos() {
				return corrupt.New(src.Path(format.ComponentIndex), "Index.db", scan.EntryPos(),
					fmt.Sprintf("the next partition's Data.db position %d", rl.src.Pos()), fmt.Errorf("entry says %d", e.Position))
			}
			wantKey = e.Key
		} else if rl.src.Pos() >= total {
			break
		}
		pr, evs, err := rl.partition(wantKey, events)
		events = evs
		if err != nil {
			return err
		}
		if cut != nil {
			if err := cut.partition(&pr, events); err != nil {
				return err
			}
		} else {
			if err := rl.relinkEntry(e, &pr, events, scan.EntryPos()); err != nil {
				return err
			}
			if err := rw.iw.AddEntry(e); err != nil {
				return fmt.Errorf("%s: %w", dataPath, err)
			}
		}
		if res.cut.n == 0 && res.Partitions > 0 && pr.oldStart >= total/2 {
			res.cut = boundary{a: pr.oldStart, b: pr.newStart, n: res.Partitions}
		}
		rw.bf.Add(pr.key)
		if !sizes.Remove(pr.oldSize) {
			histMiss = true
		}
		sizes.Add(pr.newSize)
		if rw.first == nil {
			rw.first = append([]byte(nil), pr.key...)
		}
		rw.last = append(rw.last[:0], pr.key...)
		res.Partitions++
		if o.Progress != nil && res.Partitions%1024 == 0 {
			o.Progress(rl.src.Pos(), total)
		}
	}
	if scan != nil {
		if err := scan.Err(); err != nil {
			return fmt.Errorf("%s: %w", src.Path(format.ComponentIndex), err)
		}
	}
	if rl.src.Pos() != total {
		return corrupt.New(dataPath, "Data.db", rl.src.Pos(), "no partition beyond those Index.db lists", fmt.Errorf("%d bytes left", total-rl.src.Pos()))
	}
	if from.IsBTI() && src.Partitions() != nil && src.Partitions().KeyCount != res.Partitions {
		return corrupt.New(src.Path(format.ComponentPartitions), format.ComponentPartitions, src.Partitions().KeysPos,
			fmt.Sprintf("a key count equal to the %d partitions of Data.db", res.Partitions), fmt.Errorf("footer says %d", src.Partitions().KeyCount))
	}
	if histMiss {
		res.Losses = append(res.Losses, stats.Loss{Field: "Stats.PartitionSizes",
			Reason: "the source histogram does not count every partition's size; sizes were added for the rewritten partitions anyway"})
	}
	if o.Progress != nil {
		o.Progress(total, total)
	}
	return nil
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
	res.CompressionInfo, res.Checksums = dr.Info, dr.Checksums
	return nil
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

// PlaceCount is the count of LIVE and non-LIVE DeletionTimes in one place.
type PlaceCount struct {
	Place   string `json:"place"`
	Live    int64  `json:"live"`
	NonLive int64  `json:"non_live"`
}

// ByPlace lists the counts with place names.
func (c *Counts) ByPlace() []PlaceCount {
	out := make([]PlaceCount, placeCount)
	for p := Place(0); p < placeCount; p++ {
		out[p] = PlaceCount{Place: p.String(), Live: c.Live[p], NonLive: c.NonLive[p]}
	}
	return out
}

// MarshalJSON writes the counts by place name.
func (c Counts) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Places              []PlaceCount `json:"places"`
		BlocksWithoutMarker int64        `json:"index_blocks_without_marker"`
		Capped              int64        `json:"capped"`
	}{c.ByPlace(), c.BlocksWithoutMarker, c.Capped})
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
