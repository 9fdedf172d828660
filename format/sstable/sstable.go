// Package sstable opens every component of one sstable, big or BTI, and
// ties the format packages together: the descriptor and TOC, Statistics.db
// (for the version's serialization header and partitioner), Data.db through
// reader (compressed or not, mmap or buffered), Index.db and Summary.db or
// Partitions.db and Rows.db, and Filter.db. It is where a Go program starts
// reading an sstable: Open, then EachPartition or ScanPartitions, or Find a
// key. Commands and features use this instead of opening files.
package sstable

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/summary"
	"github.com/sstabletool/sstabletool/reader"
)

// Options controls how components are read.
type Options struct {
	Access reader.Access
	// NoVerify skips per-chunk CRC checks on the read path (verify still checks).
	NoVerify bool
	// NoTries opens a BTI sstable without Partitions.db and Rows.db, which
	// are derived from Data.db: for scrub, which rebuilds ones that do
	// not open. Scans need neither; lookups then say they are missing.
	NoTries bool
	// OnIndexDamage, when set, is told each time a key lookup finds the
	// partition index (Summary.db, Index.db, Partitions.db, Rows.db) at
	// odds with Data.db or unreadable; the lookup then scans Data.db for
	// the key (see Find). Without it such a lookup fails.
	OnIndexDamage func(err error)
}

// SSTable is one opened sstable. Close it when done. Its parts are read
// through methods: what Open decoded and aligned (the decoder's schema and
// the column types in the same order) cannot be changed from outside.
// An SSTable is safe for concurrent reads through Decoder and Data; the
// lookup helpers (Summary, Find, PartitionAt) share state and are not.
type SSTable struct {
	desc       format.Descriptor
	toc        []string
	badTOC     []format.BadTOCEntry // TOC.txt lines that are no component name
	statistics *stats.Statistics
	// schema drives the Data.db decoder; its columns are in Cassandra's
	// order, and the types below are aligned with it.
	schema          *rows.Schema
	keyType         *cqltype.Type
	clusteringTypes []*cqltype.Type
	staticTypes     []*cqltype.Type
	regularTypes    []*cqltype.Type
	partitioner     token.Partitioner

	data       *reader.Data
	indexFile  reader.File // big format; nil for BTI or when missing
	indexCodec *index.Codec
	// partitions and rowIndex are a BTI (da) sstable's trie indexes, in
	// place of Index.db and Summary.db; nil for big format (or when missing).
	partitions *bti.PartitionIndex
	rowIndex   *bti.RowIndex
	btiFiles   []reader.File
	opts       Options

	summary        *summary.Summary
	summaryErr     error
	summaryRebuilt bool
	// lookupSummaryFix is what lookups use when Summary.db cannot be read
	// (lookupSummary); lookupSummaryDone once it was tried.
	lookupSummaryFix  *summary.Summary
	lookupSummaryDone bool

	lookupCursor  *reader.Cursor
	lookupDecoder *rows.Decoder
	lookupScanner *index.Scanner // Index.db's, for Find

	headerFixes []HeaderFix
}

// Open opens the sstable that path (any of its components) belongs to.
func Open(path string, opts Options) (*SSTable, error) {
	desc, _, err := format.ParseDescriptor(path)
	if err != nil {
		return nil, err
	}
	s := &SSTable{desc: desc, opts: opts}
	// An implausible TOC.txt line (a path, control characters) is left
	// out of the components: Cassandra would look for such a file, not
	// find it and read on, and no path is ever made of it.
	if s.toc, s.badTOC, err = desc.ReadTOCEntries(); err != nil {
		return nil, err // names TOC.txt itself
	}
	for _, c := range []string{format.ComponentData, format.ComponentStatistics} {
		if _, err := os.Stat(desc.Path(c)); err != nil {
			return nil, fmt.Errorf("%s: required component %s is missing: %w", desc.Path(format.ComponentData), c, err)
		}
	}
	// Summary.db, Filter.db, CRC.db, Digest.crc32 and TOC.txt itself may be
	// absent (Cassandra rebuilds the summary and filter; hand-copied or
	// streamed sstables lose the rest); reads do without them and verify
	// lists them. Only CompressionInfo.db changes how Data.db reads: without
	// it Data.db would be taken as uncompressed, so when TOC.txt lists it
	// and it is gone, say so instead of decoding compressed bytes as rows.
	if s.listed(format.ComponentCompressionInfo) {
		if err := s.needCompressionInfo("TOC.txt lists"); err != nil {
			return nil, err
		}
	}
	if s.statistics, err = stats.ReadFile(desc.Path(format.ComponentStatistics), desc.Version); err != nil {
		return nil, err
	}
	// Without TOC.txt, Statistics.db still tells: its compression ratio is
	// NO_COMPRESSION_RATIO only for an uncompressed Data.db. CRC.db is
	// written only beside an uncompressed one, so it outweighs the ratio.
	if s.toc == nil && !fileExists(desc.Path(format.ComponentCRC)) {
		if st := s.statistics.Stats; st != nil && st.CompressionRatio != stats.NoCompressionRatio {
			if err := s.needCompressionInfo(fmt.Sprintf("Statistics.db's compression ratio (%g, not %g) says exists", st.CompressionRatio, stats.NoCompressionRatio)); err != nil {
				return nil, err
			}
		}
	}
	if err := s.buildSchema(); err != nil {
		return nil, fmt.Errorf("%s: Statistics.db serialization header: %w", desc.Path(format.ComponentStatistics), err)
	}
	dopts := reader.DataOptions{HasMaxCompressedLength: desc.Version.HasMaxCompressedLength, Verify: !opts.NoVerify}
	if ci := desc.Path(format.ComponentCompressionInfo); fileExists(ci) {
		dopts.CompressionInfoPath = ci
	} else if crc := desc.Path(format.ComponentCRC); fileExists(crc) {
		dopts.ChecksumsPath = crc
	}
	if s.data, err = reader.OpenData(desc.Path(format.ComponentData), opts.Access, dopts); err != nil {
		return nil, err
	}
	if err := s.checkUncompressedGuess(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.fixFrozenUDTHeader(); err != nil {
		s.Close()
		return nil, err
	}
	if ip := desc.Path(format.ComponentIndex); !desc.Version.IsBTI() && fileExists(ip) {
		if s.indexFile, err = reader.Open(ip, opts.Access); err != nil {
			s.Close()
			return nil, err
		}
	}
	if desc.Version.IsBTI() && !opts.NoTries {
		if err := s.openTries(opts.Access); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.checkDataNotLost(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// checkDataNotLost refuses an empty Data.db beside an index that lists
// partitions: every scan would read it as a table without partitions (and
// exit as if all were well), where Cassandra, reading through the index,
// fails on the first partition. Only writers' files reach here with an
// empty Data.db and an index, and theirs are empty too.
func (s *SSTable) checkDataNotLost() error {
	if s.data.Length() > 0 {
		return nil
	}
	what := ""
	switch {
	case s.indexFile != nil && s.indexFile.Size() > 0:
		what = fmt.Sprintf("Index.db lists partitions (%d bytes of entries)", s.indexFile.Size())
	case s.partitions != nil && s.partitions.KeyCount > 0:
		what = fmt.Sprintf("Partitions.db counts %d partitions", s.partitions.KeyCount)
	default:
		return nil
	}
	return corrupt.New(s.Path(format.ComponentData), format.ComponentData, 0,
		"partitions, since "+what, fmt.Errorf("%w: Data.db holds no byte of data (truncated, or its length in CompressionInfo.db is lost)", io.ErrUnexpectedEOF))
}

// needCompressionInfo fails when CompressionInfo.db is absent although why
// ("TOC.txt lists", ...) says Data.db is compressed.
func (s *SSTable) needCompressionInfo(why string) error {
	p := s.desc.Path(format.ComponentCompressionInfo)
	if fileExists(p) {
		return nil
	}
	return corrupt.New(p, format.ComponentCompressionInfo, -1,
		"CompressionInfo.db, which "+why+" (Data.db is compressed and cannot be read without it)", os.ErrNotExist)
}

// checkUncompressedGuess is the last guard for a Data.db read as
// uncompressed with neither CompressionInfo.db nor CRC.db beside it: Open
// has already trusted Statistics.db's compression ratio, but a writer
// other than Cassandra's may leave it at -1 for compressed data. Decoded
// as rows, such bytes would fail somewhere inside, after a command printed
// part of its output; so the first partition header must decode, or the
// error says what is likely missing.
func (s *SSTable) checkUncompressedGuess() error {
	if s.data.Compressed() || s.HasComponent(format.ComponentCRC) || s.data.Length() == 0 {
		return nil
	}
	var h rows.PartitionHeader
	err := s.Decoder(0).ReadPartitionHeader(&h)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("%w; Data.db has neither CompressionInfo.db nor CRC.db beside it and does not decode as uncompressed: if the table is compressed, its CompressionInfo.db is missing", err)
}

// listed reports whether TOC.txt names component c (false without a TOC).
func (s *SSTable) listed(c string) bool {
	for _, t := range s.toc {
		if t == c {
			return true
		}
	}
	return false
}

// MissingComponents lists the components TOC.txt names that are not on
// disk, and TOC.txt itself when it is absent. Reads work without them;
// verify reports each.
func (s *SSTable) MissingComponents() []string {
	var out []string
	if !s.HasComponent(format.ComponentTOC) {
		out = append(out, format.ComponentTOC)
	}
	for _, c := range s.toc {
		if c != format.ComponentTOC && !s.HasComponent(c) {
			out = append(out, c)
		}
	}
	return out
}

// knownComponents are the components Cassandra's big and BTI writers
// produce, in the order UnlistedComponents reports them.
var knownComponents = []string{format.ComponentData, format.ComponentStatistics, format.ComponentCompressionInfo, format.ComponentCRC,
	format.ComponentIndex, format.ComponentSummary, format.ComponentPartitions, format.ComponentRows, format.ComponentFilter, format.ComponentDigest}

// UnlistedComponents lists the components on disk that TOC.txt does not
// name (none without a TOC.txt). Cassandra takes an sstable's components
// from TOC.txt, so it would not use them; reads here still do, and verify
// reports each. Only the components Cassandra writes are looked for: a
// directory listing per sstable would make a tree of many sstables slow.
func (s *SSTable) UnlistedComponents() []string {
	if !s.HasComponent(format.ComponentTOC) {
		return nil
	}
	var out []string
	for _, c := range s.FoundComponents() {
		if !s.listed(c) {
			out = append(out, c)
		}
	}
	return out
}

// FoundComponents lists the components Cassandra writes that are on disk
// (TOC.txt aside), whatever TOC.txt says.
func (s *SSTable) FoundComponents() []string {
	var out []string
	for _, c := range knownComponents {
		if s.HasComponent(c) {
			out = append(out, c)
		}
	}
	return out
}

// PartitionsFile and RowsFile are a BTI sstable's open index files (nil
// when absent), for checks that read them whole.
func (s *SSTable) PartitionsFile() reader.File { return s.btiFile(format.ComponentPartitions) }
func (s *SSTable) RowsFile() reader.File       { return s.btiFile(format.ComponentRows) }

func (s *SSTable) btiFile(c string) reader.File {
	for _, f := range s.btiFiles {
		if f.Path() == s.Path(c) {
			return f
		}
	}
	return nil
}

// openTries opens Partitions.db and Rows.db of a BTI sstable. Either may be
// missing (scans need neither); lookups then say so.
func (s *SSTable) openTries(a reader.Access) error {
	if p := s.Path(format.ComponentPartitions); fileExists(p) {
		f, err := reader.Open(p, a)
		if err != nil {
			return err
		}
		s.btiFiles = append(s.btiFiles, f)
		if s.partitions, err = bti.OpenPartitionsFile(f, s.partitioner); err != nil {
			return err
		}
	}
	if p := s.Path(format.ComponentRows); fileExists(p) {
		f, err := reader.Open(p, a)
		if err != nil {
			return err
		}
		s.btiFiles = append(s.btiFiles, f)
		s.rowIndex = bti.OpenRowsFile(f, s.desc.Version)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (s *SSTable) buildSchema() error {
	h := s.statistics.Header
	v := s.statistics.Validation
	if h == nil {
		return errors.New("no serialization header component")
	}
	if v == nil {
		return errors.New("no validation component (partitioner)")
	}
	p, err := token.ForName(v.Partitioner)
	if err != nil {
		return err
	}
	s.partitioner = p
	hs, err := SchemaOfHeader(s.desc.Version, h)
	if err != nil {
		return err
	}
	sch := hs.Schema
	s.keyType, s.clusteringTypes, s.staticTypes, s.regularTypes = hs.KeyType, hs.ClusteringTypes, hs.StaticTypes, hs.RegularTypes
	s.schema = sch
	s.indexCodec = &index.Codec{Version: s.desc.Version, ClusteringFixed: sch.ClusteringFixed}
	return nil
}

// HeaderSchema is what a serialization header gives a decoder, an encoder
// or a renderer: the decoder's schema (the columns in Cassandra's order,
// the EncodingStats minima) and the types aligned with it.
type HeaderSchema struct {
	Schema                                     *rows.Schema
	KeyType                                    *cqltype.Type
	ClusteringTypes, StaticTypes, RegularTypes []*cqltype.Type
}

// SchemaOfHeader builds the schema of an sstable of version v whose
// serialization header is h (an sstable being written has one before it
// has a file).
func SchemaOfHeader(v format.Version, h *stats.Header) (*HeaderSchema, error) {
	sch := &rows.Schema{
		Version:              v,
		MinTimestamp:         h.MinTimestamp,
		MinLocalDeletionTime: h.MinLocalDeletionTime,
		MinTTL:               h.MinTTL,
	}
	hs := &HeaderSchema{Schema: sch}
	var err error
	if hs.KeyType, err = typeOf(h.KeyType); err != nil {
		return nil, fmt.Errorf("key type: %w", err)
	}
	for i, tn := range h.ClusteringTypes {
		t, err := typeOf(tn)
		if err != nil {
			return nil, fmt.Errorf("clustering type %d: %w", i, err)
		}
		hs.ClusteringTypes = append(hs.ClusteringTypes, t)
		sch.ClusteringFixed = append(sch.ClusteringFixed, t.FixedLength())
	}
	if sch.Static, hs.StaticTypes, err = columns(h.StaticColumns); err != nil {
		return nil, err
	}
	if sch.Regular, hs.RegularTypes, err = columns(h.RegularColumns); err != nil {
		return nil, err
	}
	return hs, nil
}

func typeOf(tn stats.TypeName) (*cqltype.Type, error) {
	if tn.Type != nil {
		return tn.Type, nil
	}
	return cqltype.Parse(tn.Class)
}

// columns converts header columns to decoder columns in Cassandra's order,
// returning the types aligned with them.
func columns(in []stats.Column) ([]rows.Column, []*cqltype.Type, error) {
	cols := make([]rows.Column, len(in))
	byName := make(map[string]*cqltype.Type, len(in))
	for i, c := range in {
		t, err := typeOf(c.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		cols[i] = rows.Column{Name: string(c.Name), Type: c.Type.Class, Fixed: t.FixedLength(), Complex: t.IsMultiCell(), Counter: t.IsCounter()}
		byName[string(c.Name)] = t
	}
	rows.SortColumns(cols)
	types := make([]*cqltype.Type, len(cols))
	for i, c := range cols {
		types[i] = byName[c.Name]
	}
	return cols, types, nil
}

// Path returns the path of one of the sstable's components.
func (s *SSTable) Path(component string) string { return s.desc.Path(component) }

// Version returns the sstable's format version.
func (s *SSTable) Version() format.Version { return s.desc.Version }

// HasComponent reports whether the component's file exists.
func (s *SSTable) HasComponent(c string) bool { return fileExists(s.Path(c)) }

// Close releases every opened file.
func (s *SSTable) Close() error {
	var errs []error
	if s.data != nil {
		errs = append(errs, s.data.Close())
	}
	if s.indexFile != nil {
		errs = append(errs, s.indexFile.Close())
	}
	for _, f := range s.btiFiles {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Decoder returns a Data.db decoder positioned at off.
func (s *SSTable) Decoder(off int64) *rows.Decoder {
	d := rows.NewDecoder(s.data.Cursor(off), s.schema)
	d.SetFile(s.Path(format.ComponentData))
	return d
}

// DecoderAt returns a decoder of Data.db at off: dec, one of this
// sstable's decoders (from Decoder or DecoderAt), moved there with its
// buffers and the chunk it holds kept, so that a walk that decodes many
// stretches of Data.db one after another reads and allocates as one
// decoder would; or, when dec is nil, a new one.
func (s *SSTable) DecoderAt(dec *rows.Decoder, off int64) *rows.Decoder {
	if dec == nil {
		return s.Decoder(off)
	}
	cur, ok := dec.Source().(*reader.Cursor)
	if !ok || cur.SeekTo(off) != nil {
		// A position outside the data: a new decoder fails its first
		// read as Decoder(off) would.
		return s.Decoder(off)
	}
	dec.Reset()
	return dec
}

// Desc is the sstable's descriptor (directory, version, generation).
func (s *SSTable) Desc() format.Descriptor { return s.desc }

// TOC lists the components TOC.txt names (nil without a TOC.txt).
func (s *SSTable) TOC() []string { return s.toc }

// BadTOCEntries are the lines of TOC.txt that TOC leaves out because they
// are no plausible component file name; print them with Quoted.
func (s *SSTable) BadTOCEntries() []format.BadTOCEntry { return s.badTOC }

// Stats is the decoded Statistics.db.
func (s *SSTable) Stats() *stats.Statistics { return s.statistics }

// Schema is what the Data.db decoder needs: clustering widths, the static
// and regular columns in Cassandra's order, the EncodingStats minima.
func (s *SSTable) Schema() *rows.Schema { return s.schema }

// KeyType is the partition key's type (a CompositeType for several
// columns).
func (s *SSTable) KeyType() *cqltype.Type { return s.keyType }

// ClusteringTypes are the clustering columns' types, in order.
func (s *SSTable) ClusteringTypes() []*cqltype.Type { return s.clusteringTypes }

// StaticTypes are the static columns' types, aligned with Schema().Static.
func (s *SSTable) StaticTypes() []*cqltype.Type { return s.staticTypes }

// RegularTypes are the regular columns' types, aligned with
// Schema().Regular.
func (s *SSTable) RegularTypes() []*cqltype.Type { return s.regularTypes }

// Partitioner orders the sstable's partitions.
func (s *SSTable) Partitioner() token.Partitioner { return s.partitioner }

// Data is Data.db as uncompressed positions.
func (s *SSTable) Data() *reader.Data { return s.data }

// Index is the open Index.db of a big-format sstable (nil for BTI, or when
// the file is missing).
func (s *SSTable) Index() reader.File { return s.indexFile }

// IndexCodec decodes Index.db entries of this sstable's version.
func (s *SSTable) IndexCodec() *index.Codec { return s.indexCodec }

// Partitions is a BTI sstable's Partitions.db (nil for big format, or when
// missing).
func (s *SSTable) Partitions() *bti.PartitionIndex { return s.partitions }

// Rows is a BTI sstable's Rows.db (nil for big format, or when missing).
func (s *SSTable) Rows() *bti.RowIndex { return s.rowIndex }

// IndexFile is one SAI or SASI file of the sstable.
type IndexFile struct {
	format.IndexComponent
	Path string
	Size int64 // -1 when TOC.txt lists it and it is not on disk
}

// IndexFiles lists the SAI and SASI files of the sstable (see
// format.IndexComponent): those TOC.txt names (Cassandra adds each to it
// as it writes it, SSTable.addComponents), or without a TOC.txt those in
// the sstable's directory, with their sizes. Taking them from TOC.txt
// keeps a scan of a directory of many sstables linear; a rewrite, which
// must see files TOC.txt does not name, lists the directory itself
// (format.Descriptor.IndexComponents).
func (s *SSTable) IndexFiles() []IndexFile {
	comps := format.IndexComponentsOf(s.toc)
	if len(s.toc) == 0 {
		comps, _ = s.desc.IndexComponents()
	}
	out := make([]IndexFile, 0, len(comps))
	for _, c := range comps {
		f := IndexFile{IndexComponent: c, Path: s.Path(c.Component), Size: -1}
		if fi, err := os.Stat(f.Path); err == nil {
			f.Size = fi.Size()
		}
		out = append(out, f)
	}
	return out
}
