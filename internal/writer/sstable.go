package writer

import (
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/filter"
	"github.com/sstabletool/sstabletool/internal/vfs"
)

// DefaultColumnIndexSize is column_index_size's default for big-format
// tables (BigFormatPartitionWriter.DEFAULT_GRANULARITY): a promoted index
// block closes once it covers this many bytes.
const DefaultColumnIndexSize = 64 << 10

// Config describes the sstable an SSTableWriter produces.
type Config struct {
	Version    format.Version
	Generation string // "1" by default
	// Header is the serialization header: EncodingStats minima and the
	// column types. Schema must be derived from it (same columns, same
	// minima); the writer encodes rows against Schema.
	Header *stats.Header
	Schema *rows.Schema
	// Partitioner is the Java class name (stats.Murmur3Partitioner, ...).
	Partitioner string
	// Compression nil writes an uncompressed Data.db with CRC.db.
	Compression         *Compression
	ColumnIndexSize     int     // 0: DefaultColumnIndexSize
	MinIndexInterval    int     // 0: 128
	BloomFilterFPChance float64 // 0: 0.01
	// ExpectedKeys sizes the bloom filter (Cassandra uses its estimate).
	ExpectedKeys int64
	// FS is what the files are written through (nil: the real disk).
	FS vfs.FS
	// RepairedAt is Statistics.db's repairedAt (milliseconds; 0:
	// unrepaired), what a compaction of repaired sstables keeps.
	RepairedAt int64
	// SamplingLevel is Summary.db's sampling level (0: full sampling).
	SamplingLevel int
	// TOC is a TOC.txt order to follow (a rewrite keeps its source's);
	// nil lists the components in Cassandra 5.0's order.
	TOC []string
	// FinishStatistics, when set, is called with the Statistics.db the
	// writer collected, before it is encoded: a rewrite of an existing
	// sstable (scrub) carries over what the rows cannot give (repairedAt,
	// the commit log intervals, the originating host).
	FinishStatistics func(*stats.Statistics)
}

// Output is where an SSTableWriter writes its components: a Staging
// (NewSSTableWriter), or for an estimate anything that takes the bytes,
// counting them (NewSSTableWriterTo).
type Output interface {
	// Create creates the component file name (the full file name, such as
	// "oa-1-big-Data.db"); Close must leave it durable.
	Create(name string) (io.WriteCloser, error)
}

// stagingOutput is a Staging as an Output.
type stagingOutput struct{ st *Staging }

func (o stagingOutput) Create(name string) (io.WriteCloser, error) {
	f, err := o.st.Create(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// countedFile counts what is written to a component.
type countedFile struct {
	*vfs.CountingWriter
	io.Closer
}

// SSTableWriter writes a new sstable partition by partition, collecting
// what Statistics.db records (MetadataCollector) on the way. Partitions
// must come in the partitioner's order and rows in clustering order.
type SSTableWriter struct {
	cfg   Config
	st    *Staging // nil when writing to an Output of the caller's
	out   Output
	desc  format.Descriptor
	part  token.Partitioner
	data  io.WriteCloser
	dw    *DataWriter
	index io.WriteCloser                 // Index.db, or Partitions.db for BTI
	rows  io.WriteCloser                 // Rows.db (BTI)
	sizes map[string]*vfs.CountingWriter // bytes written, by component
	files []io.WriteCloser               // every file created, for Abort to close
	idx   *IndexWriter
	enc   *rows.Encoder
	bf    *filter.BloomFilter
	col   *stats.Collector
	hll   stats.HLLSketch

	buf     []byte
	lastKey []byte
	first   []byte

	// current partition
	key         []byte
	start       int64
	prevStart   int64
	headerLen   int64
	cells       int64
	inPartition bool
}

// NewSSTableWriter starts an sstable in dest (see Staging for how it gets
// there): Finish commits it.
func NewSSTableWriter(dest string, cfg Config) (*SSTableWriter, error) {
	if cfg.Generation == "" {
		cfg.Generation = "1"
	}
	desc := format.Descriptor{Dir: dest, Version: cfg.Version, Generation: cfg.Generation}
	st, err := NewStaging(cfg.FS, dest, desc.Prefix())
	if err != nil {
		return nil, err
	}
	w, err := newSSTableWriter(stagingOutput{st}, dest, cfg)
	if err != nil {
		st.Abort()
		return nil, err
	}
	w.st = st
	return w, nil
}

// NewSSTableWriterTo starts an sstable whose components are created
// through out, named as in dir (which is only used for names): Close
// writes the last ones, and nothing is committed (the caller stages and
// commits, or only counts the bytes).
func NewSSTableWriterTo(out Output, dir string, cfg Config) (*SSTableWriter, error) {
	return newSSTableWriter(out, dir, cfg)
}

func newSSTableWriter(out Output, dest string, cfg Config) (*SSTableWriter, error) {
	if cfg.Generation == "" {
		cfg.Generation = "1"
	}
	if cfg.ColumnIndexSize <= 0 {
		cfg.ColumnIndexSize = DefaultGranularity(cfg.Version)
	}
	if cfg.MinIndexInterval <= 0 {
		cfg.MinIndexInterval = 128
	}
	if cfg.BloomFilterFPChance == 0 {
		cfg.BloomFilterFPChance = 0.01
	}
	if cfg.Header == nil || cfg.Schema == nil {
		return nil, errors.New("writer: Config needs Header and Schema")
	}
	if cfg.Schema.Version.Name != cfg.Version.Name {
		// The encoder writes DeletionTimes in the Schema's version's layout,
		// Index.db and Statistics.db in Config's: a mismatch would write an
		// sstable no reader decodes as intended.
		return nil, fmt.Errorf("writer: Schema is for version %q, Config for %q", cfg.Schema.Version.Name, cfg.Version.Name)
	}
	p, err := token.ForName(cfg.Partitioner)
	if err != nil {
		return nil, err
	}
	desc := format.Descriptor{Dir: dest, Version: cfg.Version, Generation: cfg.Generation}
	w := &SSTableWriter{cfg: cfg, out: out, desc: desc, part: p, enc: rows.NewEncoder(cfg.Schema), sizes: map[string]*vfs.CountingWriter{}}
	var clusteringTypes []*cqltype.Type
	for _, t := range cfg.Header.ClusteringTypes {
		clusteringTypes = append(clusteringTypes, t.Type)
	}
	w.col = stats.NewCollector(clusteringTypes)
	var ctypes []*cqltype.Type
	if cfg.Version.IsBTI() {
		// Byte-comparable clusterings need every type parsed.
		for i, tn := range cfg.Header.ClusteringTypes {
			t := tn.Type
			if t == nil {
				if t, err = cqltype.Parse(tn.Class); err != nil {
					return nil, fmt.Errorf("writer: clustering type %d: %w", i, err)
				}
			}
			ctypes = append(ctypes, t)
		}
	}
	fail := func(err error) (*SSTableWriter, error) {
		if w.dw != nil {
			w.dw.Abort()
		}
		return nil, err
	}
	if w.data, err = w.create(format.ComponentData); err != nil {
		return fail(err)
	}
	if w.dw, err = NewDataWriter(w.data, cfg.Compression, cfg.Version.HasMaxCompressedLength); err != nil {
		return fail(err)
	}
	comps := IndexComponents(cfg.Version)
	if w.index, err = w.create(comps[0]); err != nil {
		return fail(err)
	}
	var rowsOut io.Writer
	if cfg.Version.IsBTI() {
		if w.rows, err = w.create(comps[1]); err != nil {
			return fail(err)
		}
		rowsOut = w.rows
	}
	if w.idx, err = NewIndexWriter(IndexConfig{Version: cfg.Version, Partitioner: p, ClusteringTypes: ctypes,
		ClusteringFixed: cfg.Schema.ClusteringFixed, ColumnIndexSize: cfg.ColumnIndexSize,
		ExpectedKeys: cfg.ExpectedKeys, MinIndexInterval: cfg.MinIndexInterval, SamplingLevel: cfg.SamplingLevel}, w.index, rowsOut); err != nil {
		return fail(err)
	}
	if w.bf, err = filter.New(max(cfg.ExpectedKeys, 1), cfg.BloomFilterFPChance); err != nil {
		return fail(err)
	}
	return w, nil
}

// create creates a component through the output, counting its bytes.
func (w *SSTableWriter) create(component string) (io.WriteCloser, error) {
	f, err := w.out.Create(w.desc.Prefix() + component)
	if err != nil {
		return nil, err
	}
	c := &vfs.CountingWriter{W: f}
	w.sizes[component] = c
	w.files = append(w.files, f)
	return countedFile{c, f}, nil
}

// Abort discards everything written: the staging directory is removed;
// with NewSSTableWriterTo the files are closed, for the caller to discard
// what it staged.
func (w *SSTableWriter) Abort() error {
	if w.dw != nil {
		w.dw.Abort()
	}
	if w.st != nil {
		return w.st.Abort()
	}
	for _, f := range w.files {
		f.Close()
	}
	return nil
}

// Staging exposes the staging directory (crash tests); nil with
// NewSSTableWriterTo.
func (w *SSTableWriter) Staging() *Staging { return w.st }

// Descriptor is the sstable being written (its directory is the
// destination's).
func (w *SSTableWriter) Descriptor() format.Descriptor { return w.desc }

// Pos is the uncompressed Data.db position the next partition, row or
// marker starts at (what a dump prints as its "position").
func (w *SSTableWriter) Pos() int64 { return w.dw.Pos() }

// StartPartition begins a partition.
func (w *SSTableWriter) StartPartition(key []byte, d deletiontime.DeletionTime) error {
	if w.inPartition {
		return errors.New("writer: StartPartition inside a partition")
	}
	if w.lastKey != nil && w.part.CompareKeys(w.lastKey, key) >= 0 {
		return fmt.Errorf("writer: partition key %x does not sort after %x", key, w.lastKey)
	}
	w.key = append(w.key[:0], key...)
	w.start = w.dw.Pos()
	w.prevStart = w.start
	w.cells = 0
	w.idx.StartPartition(key, w.start, d)
	var err error
	if w.buf, err = w.enc.AppendPartitionHeader(w.buf[:0], key, d); err != nil {
		return err
	}
	if _, err := w.dw.Write(w.buf); err != nil {
		return err
	}
	w.headerLen = int64(len(w.buf))
	w.col.PartitionDeletion(d)
	w.inPartition = true
	return nil
}

// AddStatic writes the static row; tables with static columns must call it
// (with an empty row if need be) right after StartPartition.
func (w *SSTableWriter) AddStatic(u *rows.Unfiltered) error {
	var err error
	if w.buf, err = w.enc.AppendUnfiltered(w.buf[:0], u, 0); err != nil {
		return err
	}
	if _, err := w.dw.Write(w.buf); err != nil {
		return err
	}
	w.headerLen += int64(len(w.buf))
	w.cells += w.col.Static(u)
	return nil
}

// Add writes a row or range tombstone marker.
func (w *SSTableWriter) Add(u *rows.Unfiltered) error {
	pos := w.dw.Pos()
	var err error
	if w.buf, err = w.enc.AppendUnfiltered(w.buf[:0], u, uint64(pos-w.prevStart)); err != nil {
		return err
	}
	if _, err := w.dw.Write(w.buf); err != nil {
		return err
	}
	w.prevStart = pos
	if u.Kind == rows.KindMarker {
		w.col.Marker(u)
	} else {
		w.cells += w.col.Row(u)
	}
	return w.idx.Add(u, pos-w.start, w.dw.Pos()-w.start)
}

// DataSizeBound is an upper bound of Data.db's size on disk were n more
// uncompressed bytes written and the sstable closed now; a bound over
// limit is exact for the bytes written so far (DataWriter.SizeBound).
func (w *SSTableWriter) DataSizeBound(n, limit int64) int64 { return w.dw.SizeBound(n, limit) }

// EndPartition closes the partition and writes its index entry.
func (w *SSTableWriter) EndPartition() error {
	if !w.inPartition {
		return errors.New("writer: EndPartition outside a partition")
	}
	w.inPartition = false
	if err := w.dw.WriteByte(rows.FlagEndOfPartition); err != nil {
		return err
	}
	if err := w.idx.EndPartition(w.headerLen, w.dw.Pos()-w.start); err != nil {
		return err
	}
	w.bf.Add(w.key)
	w.hll.Add(w.key)
	w.col.EndPartition(w.dw.Pos()-w.start, w.cells)
	if w.first == nil {
		w.first = append([]byte(nil), w.key...)
	}
	w.lastKey = append(w.lastKey[:0], w.key...)
	return nil
}

// Finish writes the remaining components and moves the sstable into
// place; it returns the Data.db path.
func (w *SSTableWriter) Finish() (string, error) {
	if _, err := w.Close(); err != nil {
		return "", err
	}
	if err := w.st.Commit(); err != nil {
		return "", err
	}
	return w.desc.Path(format.ComponentData), nil
}

// Written is what Close wrote.
type Written struct {
	// Components are the sizes of the files written, in TOC.txt's order.
	Components []ComponentSize
	Data       *DataResult
	Statistics *stats.Statistics
}

// ComponentSize is one component's name (as in TOC.txt) and size.
type ComponentSize struct {
	Name string
	Size int64
}

// Close writes the remaining components (Statistics.db, Filter.db,
// Summary.db, the checksums, TOC.txt) and closes every file; it commits
// nothing (Finish does, for a writer that staged).
func (w *SSTableWriter) Close() (*Written, error) {
	if w.inPartition {
		return nil, errors.New("writer: Finish inside a partition")
	}
	dr, err := w.dw.Finish()
	if err != nil {
		return nil, err
	}
	if err := w.data.Close(); err != nil {
		return nil, err
	}
	extra, err := w.idx.Finish()
	if err != nil {
		return nil, err
	}
	if err := w.index.Close(); err != nil {
		return nil, err
	}
	if w.rows != nil {
		if err := w.rows.Close(); err != nil {
			return nil, err
		}
	}
	st := w.statistics(dr)
	if w.cfg.FinishStatistics != nil {
		w.cfg.FinishStatistics(st)
	}
	sb, err := st.Encode(w.cfg.Version)
	if err != nil {
		return nil, fmt.Errorf("writer: Statistics.db: %w", err)
	}
	v := w.cfg.Version
	files, err := SmallComponents(v, sb, extra, w.bf.Encode(v.HasOldBloomFilterFormat), dr)
	if err != nil {
		return nil, err
	}
	written := append([]string{format.ComponentData}, IndexComponents(v)[0])
	if v.IsBTI() {
		written = append(written, IndexComponents(v)[1])
	}
	for _, f := range files {
		if err := w.writeWhole(f.Name, f.Bytes); err != nil {
			return nil, err
		}
		written = append(written, f.Name)
	}
	toc := TOCFor(w.cfg.TOC, written)
	if err := w.writeWhole(format.ComponentTOC, TOCText(toc)); err != nil {
		return nil, err
	}
	out := &Written{Data: dr, Statistics: st}
	for _, name := range toc {
		out.Components = append(out.Components, ComponentSize{Name: name, Size: w.sizes[name].N})
	}
	return out, nil
}

func (w *SSTableWriter) writeWhole(component string, b []byte) error {
	f, err := w.create(component)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (w *SSTableWriter) statistics(dr *DataResult) *stats.Statistics {
	h := *w.cfg.Header
	s := &stats.Stats{
		CommitLogUpperBound: stats.NoCommitLogPosition,
		CompressionRatio:    dr.CompressionRatio(),
		ClusteringTypes:     h.ClusteringTypes,
		CommitLogLowerBound: stats.NoCommitLogPosition,
		CommitLogIntervals:  nil,
		FirstKey:            w.first,
		LastKey:             w.lastKey,
		TokenSpaceCoverage:  stats.NoTokenSpaceCoverage,
		RepairedAt:          w.cfg.RepairedAt,
	}
	w.col.Fill(s)
	if w.cfg.Version.HasLegacyMinMax {
		s.LegacyMinClusteringValues = untilNull(s.CoveredClustering.Start.Values)
		s.LegacyMaxClusteringValues = untilNull(s.CoveredClustering.End.Values)
	}
	return &stats.Statistics{
		Version:    w.cfg.Version,
		Validation: &stats.Validation{Partitioner: w.cfg.Partitioner, BloomFilterFPChance: w.cfg.BloomFilterFPChance},
		Compaction: &stats.Compaction{Cardinality: w.hll.Bytes()},
		Stats:      s,
		Header:     &h,
	}
}

func untilNull(v [][]byte) [][]byte {
	for i, x := range v {
		if x == nil {
			return v[:i]
		}
	}
	return v
}
