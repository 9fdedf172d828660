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
	// FS is what the files are written through (nil: the real disk).
	FS vfs.FS
	// Output, when set, creates the files under their final names in
	// place of a staging directory: the caller makes that crash-safe (as
	// package upgrade does with Cassandra's transaction log), Finish
	// closes every file and commits nothing, and FS is not used.
	Output Output
}

// Output creates the files of one sstable under their final names (for
// example "oa-5-big-Data.db" in the output's directory). Close must leave
// a file durable (fsynced).
type Output interface {
	Create(name string) (io.WriteCloser, error)
}

// SSTableWriter writes a new sstable partition by partition, collecting
// what Statistics.db records (MetadataCollector) on the way. Partitions
// must come in the partitioner's order and rows in clustering order.
type SSTableWriter struct {
	cfg   Config
	st    *Staging // nil with Config.Output
	out   Output   // the staging, or Config.Output
	files []io.WriteCloser
	desc  format.Descriptor
	part  token.Partitioner
	data  io.WriteCloser
	dw    *DataWriter
	index io.WriteCloser // Index.db, or Partitions.db for BTI
	rows  io.WriteCloser // Rows.db (BTI)
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
// there).
func NewSSTableWriter(dest string, cfg Config) (*SSTableWriter, error) {
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
	w := &SSTableWriter{cfg: cfg, desc: desc, part: p, enc: rows.NewEncoder(cfg.Schema), out: cfg.Output}
	if w.out == nil {
		st, err := NewStaging(cfg.FS, dest, desc.Prefix())
		if err != nil {
			return nil, err
		}
		w.st, w.out = st, stagingOutput{st}
	}
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
					w.Abort()
					return nil, fmt.Errorf("writer: clustering type %d: %w", i, err)
				}
			}
			ctypes = append(ctypes, t)
		}
	}
	fail := func(err error) (*SSTableWriter, error) { w.Abort(); return nil, err }
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

// Abort discards everything written: the staging directory is removed;
// files created through Config.Output are closed, for the caller to
// delete.
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
// Config.Output.
func (w *SSTableWriter) Staging() *Staging { return w.st }

// Descriptor is the sstable being written (its directory is the
// destination's).
func (w *SSTableWriter) Descriptor() format.Descriptor { return w.desc }

// create creates one component file through the output.
func (w *SSTableWriter) create(component string) (io.WriteCloser, error) {
	f, err := w.out.Create(w.desc.Prefix() + component)
	if err != nil {
		return nil, err
	}
	w.files = append(w.files, f)
	return f, nil
}

// writeWhole writes one component built in memory and closes it.
func (w *SSTableWriter) writeWhole(component string, b []byte) error {
	f, err := w.create(component)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Close()
}

// stagingOutput creates the files in a staging directory.
type stagingOutput struct{ st *Staging }

func (o stagingOutput) Create(name string) (io.WriteCloser, error) { return o.st.Create(name) }

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
	if w.inPartition {
		return "", errors.New("writer: Finish inside a partition")
	}
	dr, err := w.dw.Finish()
	if err != nil {
		return "", err
	}
	if err := w.data.Close(); err != nil {
		return "", err
	}
	extra, err := w.idx.Finish()
	if err != nil {
		return "", err
	}
	if err := w.index.Close(); err != nil {
		return "", err
	}
	if w.rows != nil {
		if err := w.rows.Close(); err != nil {
			return "", err
		}
	}
	st := w.statistics(dr)
	if w.cfg.FinishStatistics != nil {
		w.cfg.FinishStatistics(st)
	}
	sb, err := st.Encode(w.cfg.Version)
	if err != nil {
		return "", fmt.Errorf("writer: Statistics.db: %w", err)
	}
	v := w.cfg.Version
	files, err := SmallComponents(v, sb, extra, w.bf.Encode(v.HasOldBloomFilterFormat), dr)
	if err != nil {
		return "", err
	}
	written := append([]string{format.ComponentData}, IndexComponents(v)[0])
	if v.IsBTI() {
		written = append(written, IndexComponents(v)[1])
	}
	for _, f := range files {
		if err := w.writeWhole(f.Name, f.Bytes); err != nil {
			return "", err
		}
		written = append(written, f.Name)
	}
	toc := TOCFor(w.cfg.TOC, written)
	if err := w.writeWhole(format.ComponentTOC, TOCText(toc)); err != nil {
		return "", err
	}
	if w.st != nil {
		if err := w.st.Commit(); err != nil {
			return "", err
		}
	}
	return w.desc.Path(format.ComponentData), nil
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
