package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/reader"
)

var (
	schemaFlag = &cli.StringFlag{Name: "schema", Usage: "a CQL schema `FILE`: cqlsh DESCRIBE SCHEMA, DESCRIBE KEYSPACE or DESCRIBE TABLE output; " +
		"names the key columns and cross-checks the types. The table is the one the sstable's directory names " +
		"(<keyspace>/<table>-<id>/), or --table"}
	tableFlag = &cli.StringFlag{Name: "table", Usage: "with --schema: the table (or view) to use, as `KEYSPACE.TABLE` or TABLE, when the sstable's directory does not name it"}
)

// schemaFile is --schema, parsed once for all the sstables of a command,
// and --table.
type schemaFile struct {
	path string
	sch  *cqltype.Schema
	// table is --table, resolved; nil when each sstable's directory decides.
	table *cqltype.TableSchema
}

// loadSchema reads --schema and resolves --table; nil without --schema.
// Its errors are bad usage: no sstable can be checked against a file that
// cannot be read.
func loadSchema(c *cli.Context) (*schemaFile, error) {
	path := c.String("schema")
	if path == "" {
		if c.IsSet("table") {
			return nil, usageError("--table needs --schema FILE")
		}
		return nil, nil
	}
	// reader.ReadFile refuses a FIFO or a device without opening it, as
	// for every other file the tool reads: os.ReadFile would block on one.
	src, err := reader.ReadFile(path)
	if err != nil {
		return nil, usageError("--schema: %v", err)
	}
	sch, err := cqltype.ParseSchema(string(src))
	if err != nil {
		return nil, usageError("--schema %s: %v", path, err)
	}
	if len(sch.Tables) == 0 && len(sch.Unresolved) == 0 {
		return nil, usageError("--schema %s: no CREATE TABLE statement found", path)
	}
	sf := &schemaFile{path: path, sch: sch}
	if t := c.String("table"); t != "" {
		ks, name, ok := strings.Cut(t, ".")
		if !ok {
			ks, name = "", t
		}
		ks, name = strings.Trim(ks, `"`), strings.Trim(name, `"`)
		m := sch.Lookup(ks, name)
		switch {
		case len(m) == 0 && sch.Unresolved[t] != nil:
			return nil, usageError("--table %s: %v", t, sch.Unresolved[t])
		case len(m) == 0:
			return nil, usageError("--table %s: not in %s, which defines %s", t, path, tableList(sch))
		case len(m) > 1:
			return nil, usageError("--table %s: %d keyspaces of %s define it; name one: --table %s", t, len(m), path, m[0].Name())
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

// pick chooses the schema's table for an sstable: --table; else the table
// its directory names (in its keyspace when the name is in several); else
// the only table of a one-table file.
func (sf *schemaFile) pick(s *sstable.SSTable) (*cqltype.TableSchema, error) {
	if sf.table != nil {
		return sf.table, nil
	}
	ks, name, hasID := dirTable(s.Desc().Dir)
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
			sf.path, name, len(m), s.Desc().Dir, m[0].Name())
	case sf.sch.Unresolved[ks+"."+name] != nil:
		return nil, fmt.Errorf("--schema %s: %v", sf.path, sf.sch.Unresolved[ks+"."+name])
	case len(sf.sch.Tables) == 1:
		return sf.sch.Tables[0], nil
	}
	where := fmt.Sprintf("the directory %s does not name a table (<keyspace>/<table>-<id>/)", s.Desc().Dir)
	if hasID {
		where = fmt.Sprintf("its directory names %s.%s, which is not among them", ks, name)
	}
	return nil, fmt.Errorf("--schema %s defines %d tables (%s) and %s; choose one with --table KEYSPACE.TABLE",
		sf.path, len(sf.sch.Tables), tableList(sf.sch), where)
}

// apply checks an sstable against its table in the schema (key, clustering
// and every stored column with the same types) and returns the names the
// schema gives its key and clustering columns.
func (sf *schemaFile) apply(s *sstable.SSTable) (inspect.Names, error) {
	ts, err := sf.pick(s)
	if err != nil {
		return inspect.Names{}, err
	}
	if err := inspect.CheckSchema(s, ts); err != nil {
		return inspect.Names{}, fmt.Errorf("--schema %s: table %s does not match %s: %w", sf.path, ts.Name(), s.Path(format.ComponentStatistics), err)
	}
	n := inspect.Names{Keyspace: ts.Keyspace, Table: ts.Table, PartitionKey: ts.PartitionKey}
	for _, c := range ts.Clustering {
		n.Clustering = append(n.Clustering, c.Name)
	}
	if n.Keyspace == "" {
		n.Keyspace = inspect.DefaultNames(s).Keyspace
	}
	return n, nil
}
