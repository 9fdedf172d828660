package merge

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/filter"
)

// Table is the sstables of one table, opened, with the schema they share:
// their serialization headers united by column name (a table gains and
// loses columns over time, so each sstable may know a different subset).
// Its methods describe the merged output; Scan and Get merge.
//
// A Table is not safe for concurrent use: scans and lookups share each
// sstable's lookup state.
type Table struct {
	ssts  []*sstable.SSTable
	owned bool // Close closes the sstables (Open opened them)
	dir   format.TableDir

	partitioner     token.Partitioner
	keyType         *cqltype.Type
	clusteringTypes []*cqltype.Type
	static, regular []column // united, in Cassandra's column order
	header          *stats.Header
	schema          *rows.Schema

	// per sstable: its static and regular column indexes in the united
	// columns (nil when they are the same)
	staticMap, regularMap [][]int
	filters               []*filter.BloomFilter // Filter.db, read on the first lookup
	filterRead            []bool
	hasDropped            bool // some column has a drop time (DropColumns)
}

// column is one united column: the decoder's description, its type, and
// the sstable it was first seen in (for error messages).
type column struct {
	rows.Column
	typ   *cqltype.Type
	first int
	// dropped: the column was dropped at droppedAt (microseconds), whose
	// older cells are not read (DropColumns).
	dropped   bool
	droppedAt int64
}

// Open opens the sstables that paths name (any component of each) and
// checks that they are one table (see New). A path that cannot be opened
// is an error naming it; the sstables opened before it are closed.
func Open(paths []string, o sstable.Options) (*Table, error) {
	var ssts []*sstable.SSTable
	for _, p := range paths {
		s, err := sstable.Open(p, o)
		if err != nil {
			for _, s := range ssts {
				s.Close()
			}
			return nil, withPath(p, err)
		}
		ssts = append(ssts, s)
	}
	t, err := New(ssts)
	if err != nil {
		for _, s := range ssts {
			s.Close()
		}
		return nil, err
	}
	t.owned = true
	return t, nil
}

// New makes a Table of sstables the caller opened (and closes). They are
// ordered by generation, oldest first: the order Cassandra's merge breaks
// exact ties in and the order provenance names them in.
//
// They must be one table. When every sstable's directory is named
// <table>-<id> (as Cassandra names table directories) the directories
// decide; otherwise their serialization headers must agree: the same
// partitioner, partition key and clustering types, and at least one
// column in common. A column present in several sstables must have the
// same type in each (a user type may have gained fields: the larger one
// is taken). Each error names the two sstables that disagree.
func New(ssts []*sstable.SSTable) (*Table, error) {
	if len(ssts) == 0 {
		return nil, errors.New("merge: no sstables")
	}
	ssts = slices.Clone(ssts)
	slices.SortStableFunc(ssts, func(a, b *sstable.SSTable) int {
		da, db := a.Desc(), b.Desc()
		if c := format.CompareGenerations(da.Generation, db.Generation); c != 0 {
			return c
		}
		return strings.Compare(da.Dir, db.Dir)
	})
	t := &Table{ssts: ssts, dir: format.TableOf(ssts[0].Desc().Dir)}
	if err := t.sameTable(); err != nil {
		return nil, err
	}
	if err := t.unite(); err != nil {
		return nil, err
	}
	t.filters = make([]*filter.BloomFilter, len(ssts))
	t.filterRead = make([]bool, len(ssts))
	return t, nil
}

// Close closes the sstables when Open opened them; a Table made by New
// leaves them to its caller.
func (t *Table) Close() error {
	if !t.owned {
		return nil
	}
	var errs []error
	for _, s := range t.ssts {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// SSTables are the table's sstables, oldest first. Provenance and
// explanations name an sstable by its index here.
func (t *Table) SSTables() []*sstable.SSTable { return t.ssts }

// Name is the sstable's Data.db path: how errors and explanations name
// sstable i.
func (t *Table) Name(i int) string { return t.ssts[i].Path(format.ComponentData) }

// Dir is what the first sstable's directory says about the table.
func (t *Table) Dir() format.TableDir { return t.dir }

// Partitioner orders the table's partitions.
func (t *Table) Partitioner() token.Partitioner { return t.partitioner }

// KeyType is the partition key's type.
func (t *Table) KeyType() *cqltype.Type { return t.keyType }

// ClusteringTypes are the clustering columns' types, in order.
func (t *Table) ClusteringTypes() []*cqltype.Type { return t.clusteringTypes }

// StaticTypes are the united static columns' types, aligned with
// Schema().Static.
func (t *Table) StaticTypes() []*cqltype.Type { return types(t.static) }

// RegularTypes are the united regular columns' types, aligned with
// Schema().Regular.
func (t *Table) RegularTypes() []*cqltype.Type { return types(t.regular) }

func types(cs []column) []*cqltype.Type {
	out := make([]*cqltype.Type, len(cs))
	for i := range cs {
		out[i] = cs[i].typ
	}
	return out
}

// Schema describes the merged output: every cell's Column indexes the
// united columns, in Cassandra's order. Its EncodingStats minima are the
// smallest of the sstables' Statistics.db minima (SerializationHeader.make)
// and its Version is the
// first sstable's; SchemaFor gives it for another version.
func (t *Table) Schema() *rows.Schema { return t.schema }

// SchemaFor is Schema for a writer of version v (the encoder writes
// DeletionTimes in v's layout).
func (t *Table) SchemaFor(v format.Version) *rows.Schema {
	s := *t.schema
	s.Version = v
	return &s
}

// Header is the serialization header a writer of the merged output
// records: the united columns and the sstables' smallest minimum
// timestamp, local deletion time and TTL (SerializationHeader.make).
// Schema and Header describe the same columns in the same order.
func (t *Table) Header() *stats.Header { return t.header }

func (t *Table) cmp() comparator { return comparator{t.clusteringTypes} }

// Path is the Data.db path of the first sstable, so that a Table can
// stand in for an sstable where only error messages need a path.
func (t *Table) Path(component string) string { return t.ssts[0].Path(component) }

// sameTable refuses sstables of two tables.
func (t *Table) sameTable() error {
	dirs := make([]format.TableDir, len(t.ssts))
	byDir := true
	for i, s := range t.ssts {
		dirs[i] = format.TableOf(s.Desc().Dir)
		byDir = byDir && dirs[i].HasID()
	}
	first := t.ssts[0]
	for i, s := range t.ssts[1:] {
		i++
		if byDir {
			if dirs[i].Dir != dirs[0].Dir {
				return fmt.Errorf("%s and %s are sstables of two tables (%s and %s): merge the sstables of one table",
					t.Name(0), t.Name(i), tableName(dirs[0]), tableName(dirs[i]))
			}
		}
		what := "are not one table"
		if byDir {
			what = "are one table's (by their directory) but their headers are incompatible"
		}
		if a, b := first.Partitioner().Name(), s.Partitioner().Name(); a != b {
			return fmt.Errorf("%s and %s %s: partitioners %s and %s", t.Name(0), t.Name(i), what, a, b)
		}
		if a, b := first.KeyType(), s.KeyType(); a.String() != b.String() {
			return fmt.Errorf("%s and %s %s: partition keys %s and %s", t.Name(0), t.Name(i), what, a.CQL(), b.CQL())
		}
		if !byDir && !sameClustering(first, s) {
			return fmt.Errorf("%s and %s are not one table: clustering columns %s and %s", t.Name(0), t.Name(i), clusteringCQL(first), clusteringCQL(s))
		}
		if !byDir && !shareColumn(first, s) {
			return fmt.Errorf("%s and %s are not one table: their directories do not name a table (<keyspace>/<table>-<id>) and they have no column in common", t.Name(0), t.Name(i))
		}
	}
	return nil
}

func tableName(d format.TableDir) string {
	if d.Keyspace == "" {
		return d.Table
	}
	return d.Keyspace + "." + d.Table + " in " + filepath.Base(d.Dir)
}

func sameClustering(a, b *sstable.SSTable) bool {
	return clusteringCQL(a) == clusteringCQL(b)
}

func clusteringCQL(s *sstable.SSTable) string {
	var parts []string
	for _, t := range s.ClusteringTypes() {
		parts = append(parts, t.CQL())
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func shareColumn(a, b *sstable.SSTable) bool {
	names := map[string]bool{}
	sa, sb := a.Schema(), b.Schema()
	for _, c := range append(slices.Clone(sa.Static), sa.Regular...) {
		names[c.Name] = true
	}
	if len(names) == 0 && len(sb.Static)+len(sb.Regular) == 0 {
		return true // key-only tables
	}
	for _, c := range append(slices.Clone(sb.Static), sb.Regular...) {
		if names[c.Name] {
			return true
		}
	}
	return false
}

// unite builds the united columns, schema and header, and each sstable's
// column maps.
func (t *Table) unite() error {
	first := t.ssts[0]
	t.partitioner = first.Partitioner()
	t.keyType = first.KeyType()
	t.clusteringTypes = first.ClusteringTypes()
	for i, s := range t.ssts[1:] {
		i++
		ct := s.ClusteringTypes()
		if len(ct) != len(t.clusteringTypes) {
			return fmt.Errorf("%s and %s: incompatible headers: %d and %d clustering columns", t.Name(0), t.Name(i), len(t.clusteringTypes), len(ct))
		}
		for k := range ct {
			if ct[k].String() != t.clusteringTypes[k].String() {
				return fmt.Errorf("%s and %s: incompatible headers: clustering column %d is %s in one and %s in the other",
					t.Name(0), t.Name(i), k, t.clusteringTypes[k].CQL(), ct[k].CQL())
			}
		}
	}
	byName := map[string]*column{}
	static := map[string]bool{}
	var all []*column
	add := func(si int, isStatic bool, cols []rows.Column, typs []*cqltype.Type) error {
		for k, c := range cols {
			u := byName[c.Name]
			if u == nil {
				u = &column{Column: c, typ: typs[k], first: si}
				byName[c.Name], static[c.Name] = u, isStatic
				all = append(all, u)
				continue
			}
			if static[c.Name] != isStatic {
				return fmt.Errorf("%s and %s: incompatible headers: column %s is static in one and not in the other", t.Name(u.first), t.Name(si), c.Name)
			}
			if u.Complex != c.Complex || u.Counter != c.Counter {
				return fmt.Errorf("%s and %s: incompatible headers: column %s is %s in one and %s in the other", t.Name(u.first), t.Name(si), c.Name, u.typ.CQL(), typs[k].CQL())
			}
			if u.typ.String() == typs[k].String() {
				continue
			}
			switch {
			case extendsUDT(u.typ, typs[k]):
				u.Column, u.typ = c, typs[k] // the user type gained fields
			case extendsUDT(typs[k], u.typ):
			default:
				return fmt.Errorf("%s and %s: incompatible headers: column %s is %s in one and %s in the other", t.Name(u.first), t.Name(si), c.Name, u.typ.CQL(), typs[k].CQL())
			}
		}
		return nil
	}
	h := &stats.Header{KeyType: first.Stats().Header.KeyType, ClusteringTypes: first.Stats().Header.ClusteringTypes}
	for i, s := range t.ssts {
		sch := s.Schema()
		if err := add(i, true, sch.Static, s.StaticTypes()); err != nil {
			return err
		}
		if err := add(i, false, sch.Regular, s.RegularTypes()); err != nil {
			return err
		}
		ts, ldt, ttl := encodingMinima(s)
		if i == 0 || ts < h.MinTimestamp {
			h.MinTimestamp = ts
		}
		if i == 0 || ldt < h.MinLocalDeletionTime {
			h.MinLocalDeletionTime = ldt
		}
		if i == 0 || ttl < h.MinTTL {
			h.MinTTL = ttl
		}
	}
	// EncodingStats' constructor: "no timestamp" and "no deletion time"
	// are encoded against the epochs.
	if h.MinTimestamp == math.MinInt64 {
		h.MinTimestamp = stats.TimestampEpoch
	}
	if h.MinLocalDeletionTime == stats.NoDeletionTime {
		h.MinLocalDeletionTime = stats.DeletionTimeEpoch
	}
	var staticCols, regularCols []rows.Column
	for _, c := range all {
		if static[c.Name] {
			staticCols = append(staticCols, c.Column)
		} else {
			regularCols = append(regularCols, c.Column)
		}
	}
	rows.SortColumns(staticCols)
	rows.SortColumns(regularCols)
	for _, c := range staticCols {
		t.static = append(t.static, *byName[c.Name])
		h.StaticColumns = append(h.StaticColumns, stats.Column{Name: []byte(c.Name), Type: stats.TypeName{Class: byName[c.Name].typ.String(), Type: byName[c.Name].typ}})
	}
	for _, c := range regularCols {
		t.regular = append(t.regular, *byName[c.Name])
		h.RegularColumns = append(h.RegularColumns, stats.Column{Name: []byte(c.Name), Type: stats.TypeName{Class: byName[c.Name].typ.String(), Type: byName[c.Name].typ}})
	}
	t.header = h
	t.schema = &rows.Schema{Version: first.Version(), ClusteringFixed: slices.Clone(first.Schema().ClusteringFixed),
		Static: staticCols, Regular: regularCols,
		MinTimestamp: h.MinTimestamp, MinLocalDeletionTime: h.MinLocalDeletionTime, MinTTL: h.MinTTL}
	t.staticMap = make([][]int, len(t.ssts))
	t.regularMap = make([][]int, len(t.ssts))
	for i, s := range t.ssts {
		t.staticMap[i] = columnMap(s.Schema().Static, t.static)
		t.regularMap[i] = columnMap(s.Schema().Regular, t.regular)
	}
	return nil
}

// encodingMinima is what SerializationHeader.make takes of an sstable for
// the merged output's EncodingStats: its Statistics.db minima
// (getMinTimestamp, getMinLocalDeletionTime, getMinTTL, which StatsMetadata
// holds exactly) rather than its header's, which a flush computes
// differently (the header's TTL minimum counts expiring cells only, the
// statistics' every cell, so a table with any TTL-less data encodes its
// TTLs against 0). An sstable without a stats component gives its
// header's.
func encodingMinima(s *sstable.SSTable) (ts, ldt, ttl int64) {
	if st := s.Stats().Stats; st != nil {
		return st.MinTimestamp, st.MinLocalDeletionTime, int64(st.MinTTL)
	}
	h := s.Stats().Header
	return h.MinTimestamp, h.MinLocalDeletionTime, h.MinTTL
}

// columnMap maps an sstable's column indexes to the united ones; nil when
// they are the same. Both lists are in Cassandra's column order, so the
// map is increasing and cells keep their order.
func columnMap(src []rows.Column, united []column) []int {
	same := len(src) == len(united)
	m := make([]int, len(src))
	j := 0
	for i, c := range src {
		for j < len(united) && united[j].Name != c.Name {
			j++
		}
		m[i] = j
		same = same && i == j
	}
	if same {
		return nil
	}
	return m
}

// extendsUDT reports whether b is user type a with fields added at the
// end (ALTER TYPE ... ADD): cells of a read the same under b.
func extendsUDT(a, b *cqltype.Type) bool {
	if a.Kind != cqltype.UDT || b.Kind != cqltype.UDT || a.Keyspace != b.Keyspace || a.Name != b.Name ||
		a.Frozen != b.Frozen || len(b.Params) <= len(a.Params) || len(a.FieldNames) != len(a.Params) || len(b.FieldNames) != len(b.Params) {
		return false
	}
	for i := range a.Params {
		if a.Params[i].String() != b.Params[i].String() || a.FieldNames[i] != b.FieldNames[i] {
			return false
		}
	}
	return true
}

// withPath names path in err unless it already does.
func withPath(path string, err error) error {
	if err == nil {
		return nil
	}
	if d, _, perr := format.ParseDescriptor(path); perr == nil {
		if strings.Contains(err.Error(), filepath.Join(d.Dir, d.Prefix())) {
			return err
		}
	}
	if strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
