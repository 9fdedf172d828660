package nodeschema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/cql"
	"github.com/sstabletool/sstabletool/internal/query"
	"github.com/sstabletool/sstabletool/merge"
)

// systemTables are the system_schema tables a schema is read from, with
// their primary keys: the same on every version from 3.0 to 5.0
// (SchemaKeyspace's definitions; column_masks is 5.0's), only their other
// columns differ, and those are read by name.
var systemTables = map[string][]string{
	"keyspaces":       {"keyspace_name"},
	"tables":          {"keyspace_name", "table_name"},
	"columns":         {"keyspace_name", "table_name", "column_name"},
	"dropped_columns": {"keyspace_name", "table_name", "column_name"},
	"types":           {"keyspace_name", "type_name"},
	"indexes":         {"keyspace_name", "table_name", "index_name"},
	"views":           {"keyspace_name", "view_name"},
	"triggers":        {"keyspace_name", "table_name", "trigger_name"},
	"column_masks":    {"keyspace_name", "table_name", "column_name"},
}

// row is one live row of a system table: its columns' values by name
// (nulls absent), copied out of the merge.
type row map[string]value

type value struct {
	typ *cqltype.Type
	b   []byte
}

// reader reads the system tables of one system_schema directory.
type reader struct {
	dir       string // <data>/system_schema
	o         Options
	keyspaces []string
	table     string // one table or view of the keyspace ("" for all)
	warn      func(error)
	columns   map[string][]string // the columns each system table's sstables hold, for the layout
}

// read reads the live rows of system table name (for the keyspaces asked
// for), merged as Cassandra's read path merges them. An sstable that
// cannot be opened or read is left out with a warning naming it, and the
// rest are read; a table without sstables has no rows.
func (r *reader) read(name string) ([]row, error) {
	dirs, err := r.tableDirs(name)
	if err != nil || len(dirs) == 0 {
		return nil, err
	}
	found := format.Find(dirs, format.FindOptions{})
	so := r.o.SSTable
	var ssts []*sstable.SSTable
	defer func() {
		for _, s := range ssts {
			s.Close()
		}
	}()
	for _, f := range found.SSTables {
		if f.Err != nil {
			r.warn(fmt.Errorf("%s: %v", f.Path, f.Err))
			continue
		}
		o := so
		path := f.Path
		o.OnIndexDamage = func(err error) { r.warn(fmt.Errorf("%s: %v", path, err)) }
		s, err := sstable.Open(f.Path, o)
		if err != nil {
			r.warn(damaged(f.Path, err))
			continue
		}
		ssts = append(ssts, s)
	}
	if len(ssts) == 0 {
		return nil, nil
	}
	rows, err := r.query(name, ssts)
	if err == nil {
		return rows, nil
	}
	// Something could not be read: find which sstables, leave them out
	// and read the others.
	var good []*sstable.SSTable
	for _, s := range ssts {
		if _, err := r.query(name, []*sstable.SSTable{s}); err != nil {
			r.warn(damaged(s.Path(format.ComponentData), err))
			continue
		}
		good = append(good, s)
	}
	if len(good) == len(ssts) {
		return nil, fmt.Errorf("system_schema.%s: %v", name, err) // each alone reads: the merge itself fails
	}
	if len(good) == 0 {
		return nil, nil
	}
	return r.query(name, good)
}

// damaged words a system table sstable left out.
func damaged(path string, err error) error {
	msg := err.Error()
	if !strings.Contains(msg, path) && !strings.Contains(msg, filepath.Base(path)) {
		msg = path + ": " + msg
	}
	return fmt.Errorf("%s; left out of the schema", msg)
}

// tableDirs are the directories of system table name: <name>-<id>, or
// <name> alone (a copy that dropped the id).
func (r *reader) tableDirs(name string) ([]string, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if t, ok := format.TableOfDir(e.Name()); ok && t == name || e.Name() == name {
			dirs = append(dirs, filepath.Join(r.dir, e.Name()))
		}
	}
	return dirs, nil
}

// query runs SELECT * FROM system_schema.name [WHERE keyspace_name IN
// (...)] on the sstables, as Cassandra's SchemaKeyspace does at startup.
func (r *reader) query(name string, ssts []*sstable.SSTable) ([]row, error) {
	t, err := merge.New(ssts)
	if err != nil {
		return nil, err
	}
	key := systemTables[name]
	stmt := "SELECT * FROM system_schema." + name
	if len(r.keyspaces) > 0 {
		var lits []string
		for _, ks := range r.keyspaces {
			lits = append(lits, "'"+strings.ReplaceAll(ks, "'", "''")+"'")
		}
		stmt += " WHERE keyspace_name IN (" + strings.Join(lits, ", ") + ")"
		// One table: its rows only, where the table's name is the first
		// clustering column (its own row, columns, drops, indexes...).
		if r.table != "" && len(key) > 1 && (key[1] == "table_name" || key[1] == "view_name") {
			stmt += " AND " + key[1] + " = '" + strings.ReplaceAll(r.table, "'", "''") + "'"
		}
	}
	sel, err := cql.Parse(stmt)
	if err != nil {
		return nil, err
	}
	plan, err := query.NewPlan(sel, t, query.Names{Keyspace: "system_schema", Table: name, PartitionKey: key[:1], Clustering: key[1:]})
	if err != nil {
		return nil, err
	}
	if r.columns != nil {
		var cols []string
		for _, c := range plan.Columns {
			cols = append(cols, c.Name)
		}
		r.columns[name] = cols
	}
	var out []row
	var arena []byte // the values, copied out of the merge in blocks
	err = plan.Run(merge.Options{Now: r.o.Now, GCGraceSeconds: merge.DefaultGCGraceSeconds}, func(qr query.Row) error {
		rw := make(row, len(qr))
		for _, v := range qr {
			if v.Null || v.Column.Type.IsMultiCell() {
				continue // system_schema's columns are all simple or frozen
			}
			if cap(arena)-len(arena) < len(v.Bytes) {
				arena = make([]byte, 0, max(64<<10, len(v.Bytes)))
			}
			at := len(arena)
			arena = append(arena, v.Bytes...)
			rw[v.Column.Name] = value{typ: v.Column.Type, b: arena[at:len(arena):len(arena)]}
		}
		out = append(out, rw)
		return nil
	})
	return out, err
}

// The typed getters of a row: ok is false when the column is null (or
// absent from this version's layout); a value that is not of its type is
// an error naming the column.

func (rw row) text(col string) (string, bool) {
	v, ok := rw[col]
	if !ok {
		return "", false
	}
	return string(v.b), true
}

func (rw row) int32(col string) (int32, bool, error) {
	v, ok := rw[col]
	if !ok {
		return 0, false, nil
	}
	if len(v.b) != 4 {
		return 0, false, fmt.Errorf("%s: expected a 4-byte int, found %d bytes", col, len(v.b))
	}
	return int32(binary.BigEndian.Uint32(v.b)), true, nil
}

func (rw row) boolean(col string) (bool, bool) {
	v, ok := rw[col]
	return ok && len(v.b) > 0 && v.b[0] != 0, ok
}

func (rw row) timestamp(col string) (int64, bool, error) {
	v, ok := rw[col]
	if !ok {
		return 0, false, nil
	}
	if len(v.b) != 8 {
		return 0, false, fmt.Errorf("%s: expected an 8-byte timestamp, found %d bytes", col, len(v.b))
	}
	return int64(binary.BigEndian.Uint64(v.b)), true, nil
}

func (rw row) uuid(col string) (string, bool, error) {
	v, ok := rw[col]
	if !ok {
		return "", false, nil
	}
	if len(v.b) != 16 {
		return "", false, fmt.Errorf("%s: expected a 16-byte uuid, found %d bytes", col, len(v.b))
	}
	s, err := v.typ.Format(v.b)
	return s, err == nil, err
}

// texts is a frozen list or set of text.
func (rw row) texts(col string) ([]string, error) {
	v, ok := rw[col]
	if !ok {
		return nil, nil
	}
	es, err := v.typ.Elements(v.b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", col, err)
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	return out, nil
}

// booleans is a frozen list of boolean.
func (rw row) booleans(col string) ([]bool, error) {
	v, ok := rw[col]
	if !ok {
		return nil, nil
	}
	es, err := v.typ.Elements(v.b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", col, err)
	}
	out := make([]bool, len(es))
	for i, e := range es {
		out[i] = len(e) > 0 && e[0] != 0
	}
	return out, nil
}

// textMap is a frozen map<text, text>.
func (rw row) textMap(col string) (map[string]string, error) {
	v, ok := rw[col]
	if !ok {
		return nil, nil
	}
	es, err := v.typ.Elements(v.b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", col, err)
	}
	out := make(map[string]string, len(es)/2)
	for i := 0; i+1 < len(es); i += 2 {
		out[string(es[i])] = string(es[i+1])
	}
	return out, nil
}

// optionCQL is a table option's value as DESCRIBE prints it (CqlBuilder):
// text single-quoted, maps as {'k': 'v'} (blob values as 0x... bare, as
// extensions print), numbers and booleans as Java prints them.
func optionCQL(v value) (string, error) {
	t := v.typ
	switch t.Kind {
	case cqltype.Text, cqltype.Ascii:
		return quote(string(v.b)), nil
	case cqltype.Map, cqltype.Set, cqltype.List:
		es, err := t.Elements(v.b)
		if err != nil {
			return "", err
		}
		elem := func(et *cqltype.Type, e []byte) (string, error) {
			if et.Kind == cqltype.Blob {
				return fmt.Sprintf("0x%x", e), nil
			}
			return optionCQL(value{typ: et, b: e})
		}
		var parts []string
		if t.Kind == cqltype.Map {
			for i := 0; i+1 < len(es); i += 2 {
				k, err := elem(t.Params[0], es[i])
				if err != nil {
					return "", err
				}
				val, err := elem(t.Params[1], es[i+1])
				if err != nil {
					return "", err
				}
				parts = append(parts, k+": "+val)
			}
			return "{" + strings.Join(parts, ", ") + "}", nil
		}
		for _, e := range es {
			s, err := elem(t.Params[0], e)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		if t.Kind == cqltype.Set {
			return "{" + strings.Join(parts, ", ") + "}", nil
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	return t.Format(v.b)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// errNoSchema is a directory without system_schema.
var errNoSchema = errors.New("no system_schema directory")

// schemaDir finds <dir>/system_schema, or dir itself when it is one.
func schemaDir(dir string) (string, error) {
	if filepath.Base(filepath.Clean(dir)) == "system_schema" {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir, nil
		}
	}
	d := filepath.Join(dir, "system_schema")
	fi, err := os.Stat(d)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s: %w (not a Cassandra data directory)", dir, errNoSchema)
	}
	return d, nil
}
