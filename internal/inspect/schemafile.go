package inspect

import (
	"fmt"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/reader"
)

// SchemaFile is a CQL schema file (--schema: cqlsh DESCRIBE output),
// parsed once for all the sstables of a command, and the table --table
// chose from it.
type SchemaFile struct {
	path string
	sch  *cqltype.Schema
	// table is --table, resolved; nil when each sstable's directory decides.
	table *cqltype.TableSchema
}

// ReadSchemaFile reads the schema file at path and resolves table, the
// --table flag (KEYSPACE.TABLE or TABLE; "" lets each sstable's directory
// choose). Its errors are the command line's: no sstable can be checked
// against a file that cannot be read.
func ReadSchemaFile(path, table string) (*SchemaFile, error) {
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
	sf := &SchemaFile{path: path, sch: sch}
	if table != "" {
		ks, name, ok := strings.Cut(table, ".")
		if !ok {
			ks, name = "", table
		}
		ks, name = strings.Trim(ks, `"`), strings.Trim(name, `"`)
		m := sch.Lookup(ks, name)
		switch {
		case len(m) == 0 && sch.Unresolved[table] != nil:
			return nil, fmt.Errorf("--table %s: %v", table, sch.Unresolved[table])
		case len(m) == 0:
			return nil, fmt.Errorf("--table %s: not in %s, which defines %s", table, path, tableList(sch))
		case len(m) > 1:
			return nil, fmt.Errorf("--table %s: %d keyspaces of %s define it; name one: --table %s", table, len(m), path, m[0].Name())
		}
		sf.table = m[0]
	}
	return sf, nil
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

// Table is the schema's table for an sstable, chosen as Apply chooses it:
// --table; else the table its directory names; else the only one.
func (sf *SchemaFile) Table(s *sstable.SSTable) (*cqltype.TableSchema, error) {
	return sf.pick(s)
}

// pick chooses the schema's table for an sstable: --table; else the table
// its directory names (in its keyspace when the name is in several); else
// the only table of a one-table file.
func (sf *SchemaFile) pick(s *sstable.SSTable) (*cqltype.TableSchema, error) {
	return sf.TableForDir(s.Desc().Dir)
}

// TableForDir chooses the schema's table for an sstable in dir (one read,
// or one to be written there): --table; else the table the directory
// names (<keyspace>/<table>-<id>/, in its keyspace when the name is in
// several); else the only table of a one-table file.
func (sf *SchemaFile) TableForDir(dir string) (*cqltype.TableSchema, error) {
	if sf.table != nil {
		return sf.table, nil
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
			sf.path, name, len(m), dir, m[0].Name())
	case sf.sch.Unresolved[ks+"."+name] != nil:
		return nil, fmt.Errorf("--schema %s: %v", sf.path, sf.sch.Unresolved[ks+"."+name])
	case len(sf.sch.Tables) == 1:
		return sf.sch.Tables[0], nil
	}
	where := fmt.Sprintf("the directory %s does not name a table (<keyspace>/<table>-<id>/)", dir)
	if hasID {
		where = fmt.Sprintf("its directory names %s.%s, which is not among them", ks, name)
	}
	return nil, fmt.Errorf("--schema %s defines %d tables (%s) and %s; choose one with --table KEYSPACE.TABLE",
		sf.path, len(sf.sch.Tables), tableList(sf.sch), where)
}

// Apply checks an sstable against its table in the schema (key, clustering
// and every stored column with the same types) and returns the names the
// schema gives its key and clustering columns.
func (sf *SchemaFile) Apply(s *sstable.SSTable) (Names, error) {
	ts, err := sf.pick(s)
	if err != nil {
		return Names{}, err
	}
	if err := CheckSchema(s, ts); err != nil {
		return Names{}, fmt.Errorf("--schema %s: table %s does not match %s: %w", sf.path, ts.Name(), s.Path(format.ComponentStatistics), err)
	}
	n := Names{Keyspace: ts.Keyspace, Table: ts.Table, PartitionKey: ts.PartitionKey}
	for _, c := range ts.Clustering {
		n.Clustering = append(n.Clustering, c.Name)
	}
	if n.Keyspace == "" {
		n.Keyspace = DefaultNames(s).Keyspace
	}
	return n, nil
}
