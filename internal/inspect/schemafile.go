package inspect

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/reader"
)

// SchemaSource is where a command's schema comes from, chosen once for
// all its sstables: a CQL schema file (--schema: cqlsh DESCRIBE output),
// parsed once, or a node's own schema (its system_schema, read by the
// command: --schema-from DIR, or the data directory the sstables lie in).
// Either way each sstable's table is the one its directory
// (<keyspace>/<table>-<id>/) names, or --table.
//
// A file is the user's word: a table it lacks, or types that differ
// from an sstable's header, are errors. A node's schema is matched by
// table id too, and where it cannot speak for an sstable (a table it
// does not hold, a directory whose id is not the table's: a dropped or
// recreated table, a header that is another table's) the sstable falls
// back to its header's placeholder names with a warning; a column whose
// type differs from the header's (ALTER ... TYPE, allowed in 3.0) is a
// warning naming both, and the header's type reads the data.
type SchemaSource struct {
	origin string // how messages name the source: "--schema FILE", "system_schema of DIR"
	sch    *cqltype.Schema
	// table is --table, resolved; nil when each sstable's directory decides.
	table *cqltype.TableSchema
	// nodeFor finds the node schema for an sstable's table directory
	// (nil: none, the header's names); set for node sources only.
	nodeFor func(format.TableDir) *NodeSchema
	// OnWarning, when set, is told each fallback and type difference a
	// node's schema meets, and each secondary index's own table either
	// source meets (its sstables keep their header's names), naming the
	// sstable.
	OnWarning func(string)
}

// SchemaFile is the name SchemaSource had while it only read files, kept
// for the branches that still say it; new code says SchemaSource.
type SchemaFile = SchemaSource

// NodeSchema is a node's schema as the CQL model, and how to name it.
type NodeSchema struct {
	Origin string // "system_schema of /var/lib/cassandra/data"
	Schema *cqltype.Schema
}

// ReadSchemaFile reads the schema file at path and resolves table, the
// --table flag (KEYSPACE.TABLE or TABLE; "" lets each sstable's directory
// choose). Its errors are the command line's: no sstable can be checked
// against a file that cannot be read.
func ReadSchemaFile(path, table string) (*SchemaSource, error) {
	// reader.ReadFile refuses a FIFO or a device without opening it, as
	// for every other file the tool reads: os.ReadFile would block on one.
	src, err := reader.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--schema: %v", err)
	}
	sch, err := cqltype.ParseSchema(string(src))
	if err != nil {
		return nil, fmt.Errorf("--schema %s: %v", path, err)
	}
	if len(sch.Tables) == 0 && len(sch.Unresolved) == 0 {
		return nil, fmt.Errorf("--schema %s: no CREATE TABLE statement found", path)
	}
	sf := &SchemaSource{origin: "--schema " + path, sch: sch}
	if err := sf.setTable(table, "--schema "+path); err != nil {
		return nil, err
	}
	return sf, nil
}

// NodeSchemaSource is the schema of the nodes nodeFor finds for each
// sstable's table directory (nil for none: the sstable keeps its header's
// names). table is --table, resolved in fixed (nil: each directory
// decides), which then needs fixed.
func NodeSchemaSource(nodeFor func(format.TableDir) *NodeSchema, fixed *NodeSchema, table string) (*SchemaSource, error) {
	sf := &SchemaSource{nodeFor: nodeFor}
	if fixed != nil {
		sf.origin, sf.sch = fixed.Origin, fixed.Schema
	}
	if table != "" {
		if fixed == nil {
			return nil, fmt.Errorf("--table needs --schema FILE or --schema-from DIR")
		}
		if err := sf.setTable(table, fixed.Origin); err != nil {
			return nil, err
		}
	}
	return sf, nil
}

// setTable resolves --table in the source's schema.
func (sf *SchemaSource) setTable(table, origin string) error {
	if table == "" {
		return nil
	}
	sch := sf.sch
	ks, name, ok := strings.Cut(table, ".")
	if !ok {
		ks, name = "", table
	}
	ks, name = strings.Trim(ks, `"`), strings.Trim(name, `"`)
	m := sch.Lookup(ks, name)
	switch {
	case len(m) == 0 && sch.Unresolved[table] != nil:
		return fmt.Errorf("--table %s: %v", table, sch.Unresolved[table])
	case len(m) == 0:
		return fmt.Errorf("--table %s: not in %s, which defines %s", table, strings.TrimPrefix(origin, "--schema "), tableList(sch))
	case len(m) > 1:
		return fmt.Errorf("--table %s: %d keyspaces of %s define it; name one: --table %s", table, len(m), strings.TrimPrefix(origin, "--schema "), m[0].Name())
	}
	sf.table = m[0]
	return nil
}

// tableList names a schema's tables for messages.
func tableList(sch *cqltype.Schema) string {
	var names []string
	for _, t := range sch.Tables {
		names = append(names, t.Name())
	}
	if len(names) > 8 {
		names = append(names[:8], fmt.Sprintf("and %d more", len(names)-8))
	}
	return strings.Join(names, ", ")
}

// dirTable reads the keyspace and table an sstable's directory names
// (format.TableOf): <keyspace>/<table>-<id>/, or a snapshot or backup
// inside one; ok says whether the name carried a table id.
func dirTable(dir string) (keyspace, table string, ok bool) {
	t := format.TableOf(dir)
	return t.Keyspace, t.Table, t.HasID()
}

// Table is the schema's table for an sstable, chosen as Apply chooses it;
// nil (and no error) when a node's schema does not speak for it.
func (sf *SchemaSource) Table(s *sstable.SSTable) (*cqltype.TableSchema, error) {
	if sf.nodeFor != nil {
		return sf.applyNode(s)
	}
	ts, err := sf.pick(s)
	if nd := (*notDefinedError)(nil); errors.As(err, &nd) {
		sf.warn(s, nd.why+"; names from the sstable's header") // as Apply says it
		return nil, nil
	}
	return ts, err
}

// notDefinedError is a directory a schema defines no table for, whose
// sstables keep their header's names: a secondary index's own table
// (<table>-<id>/.<index>/), whose layout Cassandra derives from the index
// (CassandraIndex.indexCfsMetadata: the indexed value as partition key,
// the base table's key and clustering as clustering), or the directory of
// a table a one-table file does not define.
type notDefinedError struct{ why string }

func (e *notDefinedError) Error() string { return e.why }

// indexTable says what the schema sch (named origin) knows of the index
// whose own table the directory td is: the index and its target, or
// that the base table has no such index.
func indexTable(td format.TableDir, sch *cqltype.Schema, origin string) *notDefinedError {
	what := fmt.Sprintf("its directory (.%s/ in %s.%s's) is the own table of secondary index %s.%s.%s", td.Index, td.Keyspace, td.BaseTable(), td.Keyspace, td.BaseTable(), td.Index)
	const derived = ", which Cassandra derives from the index (CassandraIndex.indexCfsMetadata), not from a table the schema defines"
	if sch == nil {
		return &notDefinedError{what + derived}
	}
	m := sch.Lookup(td.Keyspace, td.BaseTable())
	if len(m) == 0 {
		return &notDefinedError{fmt.Sprintf("%s, and %s has no table %s.%s (dropped?)", what, origin, td.Keyspace, td.BaseTable())}
	}
	if id := strings.ReplaceAll(m[0].ID, "-", ""); id != "" && id != td.ID {
		return &notDefinedError{fmt.Sprintf("%s, but its table id %s is not %s's, %s, in %s: the directory is a dropped or recreated table's",
			what, td.ID, m[0].Name(), m[0].ID, origin)}
	}
	for _, ix := range m[0].Indexes {
		if ix.Name != td.Index {
			continue
		}
		if impl := ix.Implementation(); impl != cqltype.IndexRegular {
			return &notDefinedError{fmt.Sprintf("%s, but %s's index %s in %s is %s, which keeps no table of its own", what, m[0].Name(), ix.Name, origin, impl)}
		}
		if target := ix.Target(); target != "" {
			what += " on " + target
		}
		return &notDefinedError{what + derived}
	}
	return &notDefinedError{fmt.Sprintf("%s, and %s has no index %s on %s (dropped?)", what, origin, td.Index, m[0].Name())}
}

// pick chooses a schema file's table for an sstable: --table; else the
// table its directory names (in its keyspace when the name is in
// several); else, for a directory that names no table (a copy of an
// sstable somewhere else), the only table of a one-table file. A
// directory that names another table (<keyspace>/<table>-<id>/) is not
// given a one-table file's table: its sstables would take another
// table's names and gc_grace_seconds.
func (sf *SchemaSource) pick(s *sstable.SSTable) (*cqltype.TableSchema, error) {
	return sf.pickDir(s.Desc().Dir)
}

// pickDir is pick for an sstable in dir.
func (sf *SchemaSource) pickDir(dir string) (*cqltype.TableSchema, error) {
	if sf.table != nil {
		return sf.table, nil
	}
	path := strings.TrimPrefix(sf.origin, "--schema ")
	if td := format.TableOf(dir); td.Index != "" {
		return nil, indexTable(td, sf.sch, path)
	}
	ks, name, hasID := dirTable(dir)
	m := sf.sch.Lookup("", name)
	if len(m) > 1 {
		if inKs := sf.sch.Lookup(ks, name); len(inKs) > 0 {
			m = inKs
		}
	}
	switch {
	case len(m) == 1:
		return m[0], nil
	case len(m) > 1:
		return nil, fmt.Errorf("--schema %s defines %s in %d keyspaces and the directory %s names none of them; choose with --table %s",
			path, name, len(m), dir, m[0].Name())
	case sf.sch.Unresolved[ks+"."+name] != nil:
		return nil, fmt.Errorf("--schema %s: %v", path, sf.sch.Unresolved[ks+"."+name])
	case len(sf.sch.Tables) == 1 && !hasID:
		return sf.sch.Tables[0], nil
	case len(sf.sch.Tables) == 1:
		only := sf.sch.Tables[0].Name()
		return nil, &notDefinedError{fmt.Sprintf("--schema %s defines %s, not %s.%s, which its directory names (--table %s if the sstables are that table's)", path, only, ks, name, only)}
	}
	where := fmt.Sprintf("the directory %s does not name a table (<keyspace>/<table>-<id>/)", dir)
	if hasID {
		where = fmt.Sprintf("its directory names %s.%s, which is not among them", ks, name)
	}
	return nil, fmt.Errorf("--schema %s defines %s (%s) and %s; choose one with --table KEYSPACE.TABLE",
		path, words.Plural(len(sf.sch.Tables), "table"), tableList(sf.sch), where)
}

// nodeTable chooses a node's table for an sstable: --table, else the one
// its directory names in its keyspace, with the directory's id. It
// returns nil, with why, when the node does not speak for the sstable; a
// why of "" is no node at all (nothing to say).
func (sf *SchemaSource) nodeTable(s *sstable.SSTable) (*cqltype.TableSchema, string) {
	return sf.nodeTableDir(s.Desc().Dir)
}

// nodeTableDir is nodeTable for an sstable in dir.
func (sf *SchemaSource) nodeTableDir(dir string) (*cqltype.TableSchema, string) {
	td := format.TableOf(dir)
	node := sf.nodeFor(td)
	if node == nil {
		return nil, ""
	}
	if sf.table != nil {
		return sf.table, ""
	}
	if !td.HasID() {
		return nil, fmt.Sprintf("its directory %s is not a table's (<keyspace>/<table>-<id>/), so %s cannot say which table it is (--table names one)", td.Dir, node.Origin)
	}
	if td.Index != "" {
		return nil, indexTable(td, node.Schema, node.Origin).why
	}
	m := node.Schema.Lookup(td.Keyspace, td.Table)
	if len(m) == 0 {
		return nil, fmt.Sprintf("%s has no table %s.%s (dropped?)", node.Origin, td.Keyspace, td.Table)
	}
	ts := m[0]
	if id := strings.ReplaceAll(ts.ID, "-", ""); id != "" && id != td.ID {
		return nil, fmt.Sprintf("its directory's table id %s is not %s.%s's, %s, in %s: the directory is a dropped or recreated table's",
			td.ID, td.Keyspace, td.Table, ts.ID, node.Origin)
	}
	return ts, ""
}

// TableForDir is the source's table for an sstable to be written into
// dir (which has none yet to check the table against), and the source's
// name: a file's table as pick chooses it; a node's, that the directory
// names (with its table id) or --table, where a node's schema is found for
// dir. A node that does not speak for dir is an error saying why.
func (sf *SchemaSource) TableForDir(dir string) (*cqltype.TableSchema, string, error) {
	if sf.nodeFor == nil {
		ts, err := sf.pickDir(dir)
		return ts, sf.origin, err
	}
	ts, why := sf.nodeTableDir(dir)
	if ts == nil {
		if why == "" {
			why = fmt.Sprintf("no node's schema found for %s (<data>/<keyspace>/<table>-<id>/ beside <data>/system_schema, or --schema-from DIR)", dir)
		}
		return nil, "", errors.New(why)
	}
	origin := sf.origin
	if n := sf.nodeFor(format.TableOf(dir)); n != nil {
		origin = n.Origin
	}
	return ts, origin, nil
}

// Resolves reports whether the source gives the sstable its table: a
// file does (or Apply fails) unless it defines no table for the sstable's
// directory (notDefinedError), a node's schema where it speaks for the
// sstable.
func (sf *SchemaSource) Resolves(s *sstable.SSTable) bool {
	if sf.nodeFor == nil {
		_, err := sf.pick(s)
		return !errors.As(err, new(*notDefinedError))
	}
	ts, _ := sf.applyNode(s)
	return ts != nil
}

// warn tells OnWarning about sstable s.
func (sf *SchemaSource) warn(s *sstable.SSTable, msg string) {
	if sf.OnWarning != nil {
		sf.OnWarning(fmt.Sprintf("%s: %s", s.Path(format.ComponentData), msg))
	}
}

// Apply checks an sstable against its table in the schema (key, clustering
// and every stored column with the same types) and returns the names the
// schema gives its key and clustering columns. Where a node's schema does
// not speak for the sstable, the names are its header's (DefaultNames).
func (sf *SchemaSource) Apply(s *sstable.SSTable) (Names, error) {
	if sf.nodeFor != nil {
		ts, _ := sf.applyNode(s)
		if ts == nil {
			return DefaultNames(s), nil
		}
		return namesOf(s, ts), nil
	}
	ts, err := sf.pick(s)
	if ie := (*notDefinedError)(nil); errors.As(err, &ie) {
		sf.warn(s, ie.why+"; names from the sstable's header")
		return DefaultNames(s), nil
	}
	if err != nil {
		return Names{}, err
	}
	if err := CheckSchema(s, ts); err != nil {
		return Names{}, fmt.Errorf("--schema %s: table %s does not match %s: %w", strings.TrimPrefix(sf.origin, "--schema "), ts.Name(), s.Path(format.ComponentStatistics), err)
	}
	return namesOf(s, ts), nil
}

// applyNode is Apply with a node's schema: the table, or nil (and the
// warning said) where the node does not speak for the sstable.
func (sf *SchemaSource) applyNode(s *sstable.SSTable) (*cqltype.TableSchema, error) {
	ts, why := sf.nodeTable(s)
	if ts == nil {
		if why != "" {
			sf.warn(s, why+"; names from the sstable's header")
		}
		return nil, nil
	}
	diffs, err := compareSchema(s, ts)
	if err != nil {
		sf.warn(s, fmt.Sprintf("%s.%s in %s does not match its header: %v; names from the sstable's header", ts.Keyspace, ts.Table, sf.originOf(s), err))
		return nil, nil
	}
	for _, d := range diffs {
		sf.warn(s, fmt.Sprintf("%s in %s: %s; the header's type reads the data", ts.Name(), sf.originOf(s), d))
	}
	return ts, nil
}

// originOf names the source that speaks for s.
func (sf *SchemaSource) originOf(s *sstable.SSTable) string {
	if sf.nodeFor != nil {
		if n := sf.nodeFor(format.TableOf(s.Desc().Dir)); n != nil {
			return n.Origin
		}
	}
	return sf.origin
}

// Describe is the node's DESCRIBE text for an sstable's table (the CREATE
// TYPE statements of the user types it uses, then the table's), and the
// source that gave it; "" when the source is a file or the node does not
// speak for the sstable.
func (sf *SchemaSource) Describe(s *sstable.SSTable, internals bool) (text, origin string) {
	if sf.nodeFor == nil {
		return "", ""
	}
	ts, _ := sf.applyNode(s)
	if ts == nil {
		return "", ""
	}
	return ts.DescribeTypes() + ts.Describe(internals), sf.originOf(s)
}

// DroppedTimes are the drop times (microseconds) of the sstable's table's
// dropped columns, by name, as the schema says them (a node's
// dropped_columns, or a file's DROP ... USING TIMESTAMP, which DESCRIBE
// ... WITH INTERNALS prints); nil without.
func (sf *SchemaSource) DroppedTimes(s *sstable.SSTable) map[string]int64 {
	ts, err := sf.Table(s)
	if err != nil || ts == nil {
		return nil
	}
	var out map[string]int64
	for _, c := range ts.Columns {
		if c.DroppedTime > 0 {
			if out == nil {
				out = map[string]int64{}
			}
			out[c.Name] = c.DroppedTime
		}
	}
	return out
}

// namesOf are the names a table gives an sstable's columns.
func namesOf(s *sstable.SSTable, ts *cqltype.TableSchema) Names {
	n := Names{Keyspace: ts.Keyspace, Table: ts.Table, PartitionKey: ts.PartitionKey}
	for _, c := range ts.Clustering {
		n.Clustering = append(n.Clustering, c.Name)
	}
	for _, c := range ts.Columns {
		if c.Dropped {
			n.Dropped = append(n.Dropped, c.Name)
		}
	}
	if n.Keyspace == "" {
		n.Keyspace = DefaultNames(s).Keyspace
	}
	return n
}
