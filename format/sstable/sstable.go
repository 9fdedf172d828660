// Package sstable opens every component of one big-format sstable and ties
// the format packages together: the descriptor and TOC, Statistics.db (for
// the version's serialization header and partitioner), Data.db through
// reader (compressed or not, mmap or buffered), Index.db, Summary.db and
// Filter.db. Commands and features use this instead of opening files.
package sstable

import (
	"errors"
	"fmt"
	"os"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/index"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/summary"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/reader"
)

// Options controls how components are read.
type Options struct {
	Access reader.Access
	// NoVerify skips per-chunk CRC checks on the read path (verify still checks).
	NoVerify bool
}

// SSTable is one opened sstable. Close it when done.
type SSTable struct {
	Desc  format.Descriptor
	TOC   []string
	Stats *stats.Statistics
	// Schema drives the Data.db decoder; its columns are in Cassandra's order.
	Schema *rows.Schema
	// Types aligned with Schema: key, clustering, static and regular columns.
	KeyType         *cqltype.Type
	ClusteringTypes []*cqltype.Type
	StaticTypes     []*cqltype.Type
	RegularTypes    []*cqltype.Type
	Partitioner     token.Partitioner

	Data       *reader.Data
	Index      reader.File
	IndexCodec *index.Codec
	opts       Options

	summary    *summary.Summary
	summaryErr error

	lookupCursor  *reader.Cursor
	lookupDecoder *rows.Decoder
}

// Open opens the sstable that path (any of its components) belongs to.
func Open(path string, opts Options) (*SSTable, error) {
	desc, _, err := format.ParseDescriptor(path)
	if err != nil {
		return nil, err
	}
	if desc.Version.IsBTI() {
		return nil, &format.UnsupportedFormatError{Path: path, Format: string(desc.Version.Format), Version: desc.Version.Name}
	}
	s := &SSTable{Desc: desc, opts: opts}
	if s.TOC, err = desc.ReadTOC(); err != nil {
		return nil, err // names TOC.txt itself
	}
	for _, c := range []string{format.ComponentData, format.ComponentStatistics} {
		if _, err := os.Stat(desc.Path(c)); err != nil {
			return nil, fmt.Errorf("%s: required component %s is missing: %w", desc.Path(format.ComponentData), c, err)
		}
	}
	// A component TOC.txt lists but the directory lacks would change how
	// the rest reads (without CompressionInfo.db, Data.db would be taken
	// as uncompressed): refuse rather than guess.
	for _, c := range s.TOC {
		if _, err := os.Stat(desc.Path(c)); err != nil {
			return nil, fmt.Errorf("%s: component %s listed in TOC.txt is missing", desc.Path(c), c)
		}
	}
	if s.Stats, err = stats.ReadFile(desc.Path(format.ComponentStatistics), desc.Version); err != nil {
		return nil, err
	}
	if err := s.buildSchema(); err != nil {
		return nil, fmt.Errorf("%s: Statistics.db serialization header: %w", desc.Path(format.ComponentStatistics), err)
	}
	dopts := reader.DataOptions{HasMaxCompressedLength: desc.Version.HasMaxCompressedLength, Verify: !opts.NoVerify}
	if ci := desc.Path(format.ComponentCompressionInfo); fileExists(ci) {
		dopts.CompressionInfoPath = ci
	}
	if s.Data, err = reader.OpenData(desc.Path(format.ComponentData), opts.Access, dopts); err != nil {
		return nil, err
	}
	if ip := desc.Path(format.ComponentIndex); fileExists(ip) {
		if s.Index, err = reader.Open(ip, opts.Access); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (s *SSTable) buildSchema() error {
	h := s.Stats.Header
	v := s.Stats.Validation
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
	s.Partitioner = p
	sch := &rows.Schema{
		Version:              s.Desc.Version,
		MinTimestamp:         h.MinTimestamp,
		MinLocalDeletionTime: h.MinLocalDeletionTime,
		MinTTL:               h.MinTTL,
	}
	if s.KeyType, err = typeOf(h.KeyType); err != nil {
		return fmt.Errorf("key type: %w", err)
	}
	for i, tn := range h.ClusteringTypes {
		t, err := typeOf(tn)
		if err != nil {
			return fmt.Errorf("clustering type %d: %w", i, err)
		}
		s.ClusteringTypes = append(s.ClusteringTypes, t)
		sch.ClusteringFixed = append(sch.ClusteringFixed, t.FixedLength())
	}
	if sch.Static, s.StaticTypes, err = columns(h.StaticColumns); err != nil {
		return err
	}
	if sch.Regular, s.RegularTypes, err = columns(h.RegularColumns); err != nil {
		return err
	}
	s.Schema = sch
	s.IndexCodec = &index.Codec{Version: s.Desc.Version, ClusteringFixed: sch.ClusteringFixed}
	return nil
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
	type pair struct {
		c rows.Column
		t *cqltype.Type
	}
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
func (s *SSTable) Path(component string) string { return s.Desc.Path(component) }

// Version returns the sstable's format version.
func (s *SSTable) Version() format.Version { return s.Desc.Version }

// HasComponent reports whether the component's file exists.
func (s *SSTable) HasComponent(c string) bool { return fileExists(s.Path(c)) }

// Close releases every opened file.
func (s *SSTable) Close() error {
	var errs []error
	if s.Data != nil {
		errs = append(errs, s.Data.Close())
	}
	if s.Index != nil {
		errs = append(errs, s.Index.Close())
	}
	return errors.Join(errs...)
}

// Decoder returns a Data.db decoder positioned at off.
func (s *SSTable) Decoder(off int64) *rows.Decoder {
	return rows.NewDecoder(s.Data.Cursor(off), s.Schema)
}

// WrapDataError names the Data.db file in a decoding error.
func (s *SSTable) WrapDataError(err error) error {
	var de *rows.DecodeError
	if !errors.As(err, &de) {
		return err
	}
	// A failure below the decoder (a chunk's checksum, a short read) names
	// the file offset itself; keep it and say what was being decoded.
	var ce *reader.CorruptError
	if errors.As(de.Err, &ce) {
		return fmt.Errorf("%w (while decoding %s at uncompressed byte %d)", ce, de.Expected, de.Offset)
	}
	return reader.Corrupt(s.Path(format.ComponentData), "Data.db", de.Offset, de.Expected, de.Err)
}
