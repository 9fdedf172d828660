// Package nodeschema reads the schema a Cassandra node keeps on disk, in
// the sstables of its system_schema keyspace (keyspaces, tables, columns,
// dropped_columns, types, indexes, views, triggers and, in 5.0,
// column_masks), the way the node reads it at startup
// (SchemaKeyspace.fetchNonSystemKeyspaces): each table's sstables merged
// as Cassandra's read path merges them, as of now, and selected with
// SELECT * as SchemaKeyspace selects them.
//
// The primary keys of these tables have not changed from 3.0 to 5.0;
// their other columns have (4.0 added read_repair and
// additional_write_policy, 4.1 memtable, 5.0 allow_auto_snapshot,
// incremental_backups and the column_masks table), and each is read by the
// name the sstables' headers give it, so every layout reads alike and
// Layout says which one a node has. Cassandra 5.1 keeps its schema in the
// cluster metadata log instead (docs/schema.md).
//
// Damage does not stop a read: an sstable that cannot be opened or read
// is left out with a warning naming it, the others are read, and a table
// that cannot be made from what was read is a warning too.
package nodeschema

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/words"
)

// Options says what to read.
type Options struct {
	// Keyspaces limits the read to these keyspaces (each system table is
	// then read by partition key, through its indexes); nil reads all.
	Keyspaces []string
	// Table, with one keyspace, limits the read to that table or view
	// (each system table read by its partition key and clustering prefix,
	// through the indexes): what a command on one table's sstables needs.
	// The keyspace's user types are read whole.
	Table string
	// Now is the time the schema is read as of, in seconds since the
	// epoch (0: the current time).
	Now int64
	// SSTable opens the system tables' sstables (the access mode).
	SSTable sstable.Options
}

// Schema is a node's schema.
type Schema struct {
	// Dir is the system_schema directory read.
	Dir string
	// Layout is the system_schema layout the sstables' headers show:
	// "3.0/3.11", "4.0", "4.1" or "5.0".
	Layout    string
	Keyspaces []*Keyspace
	// CQL holds every table, view and user type as the CQL model.
	CQL *cqltype.Schema
	// Warnings are what could not be read, each naming its sstable or
	// table; what could be read is in the schema.
	Warnings []error
}

// Keyspace is one keyspace of the schema.
type Keyspace struct {
	Name          string
	DurableWrites bool
	Replication   map[string]string
	Tables        []*Table // tables and views, by name
	Types         []*cqltype.Type
}

// Table is one table or materialized view.
type Table struct {
	// Schema is the table as the CQL model: columns with their kinds,
	// types, clustering order, the id, options, indexes; a view's base
	// and WHERE clause. Dropped columns are among its columns (Dropped
	// set, or DroppedTime for one added again).
	Schema *cqltype.TableSchema
	// Dropped are the table's system_schema.dropped_columns rows.
	Dropped  []DroppedColumn
	Triggers []Trigger
}

// DroppedColumn is one dropped column.
type DroppedColumn struct {
	Name string
	// Type is the column's type as stored: CQL text, user types expanded
	// to tuples (SchemaKeyspace keeps no user type name there).
	Type string
	Kind string // "regular" or "static"
	// Time is when it was dropped, in microseconds: dropped_time's
	// milliseconds times 1000, as Cassandra reads it back
	// (SchemaKeyspace.createDroppedColumnFromRow).
	Time int64
}

// Trigger is one trigger (system_schema.triggers).
type Trigger struct{ Name, Class string }

// Read reads the schema of the data directory dir (or of dir itself when
// it is a system_schema directory). It fails only when dir has no
// system_schema; anything that cannot be read is in Warnings.
func Read(dir string, o Options) (*Schema, error) {
	sd, err := schemaDir(dir)
	if err != nil {
		return nil, err
	}
	if o.Now == 0 {
		o.Now = time.Now().Unix()
	}
	s := &Schema{Dir: sd, CQL: cqltype.NewSchema()}
	if o.Table != "" && len(o.Keyspaces) != 1 {
		return nil, fmt.Errorf("nodeschema: Options.Table %s needs one keyspace, not %d", o.Table, len(o.Keyspaces))
	}
	r := &reader{dir: sd, o: o, keyspaces: o.Keyspaces, table: o.Table, columns: map[string][]string{},
		warn: func(err error) { s.Warnings = append(s.Warnings, err) }}
	rows := map[string][]row{}
	for _, name := range []string{"keyspaces", "types", "tables", "columns", "dropped_columns", "indexes", "views", "triggers", "column_masks"} {
		rs, err := r.read(name)
		if err != nil {
			s.Warnings = append(s.Warnings, err)
		}
		rows[name] = rs
	}
	s.Layout = layout(r.columns)
	b := &builder{s: s, byKs: map[string]*Keyspace{}}
	b.build(rows)
	return s, nil
}

// layout names the system_schema layout by the columns of its tables
// table (SchemaKeyspace on each branch).
func layout(cols map[string][]string) string {
	has := func(c string) bool { return slices.Contains(cols["tables"], c) }
	switch {
	case has("allow_auto_snapshot") || has("incremental_backups") || len(cols["column_masks"]) > 0:
		return "5.0"
	case has("memtable"):
		return "4.1"
	case has("read_repair") || has("additional_write_policy"):
		return "4.0"
	}
	return "3.0/3.11"
}

// Table is the table (or view) keyspace.name, or nil.
func (s *Schema) Table(keyspace, name string) *Table {
	for _, ks := range s.Keyspaces {
		if ks.Name != keyspace {
			continue
		}
		for _, t := range ks.Tables {
			if t.Schema.Table == name {
				return t
			}
		}
	}
	return nil
}

// builder makes the schema out of the system tables' rows.
type builder struct {
	s    *Schema
	byKs map[string]*Keyspace
	// noColumns are the tables and views system_schema.columns has no
	// rows for (its sstables damaged or missing), said once.
	noColumns []string
	// optionText caches options' CQL text by column and value: a node's
	// tables mostly share their options.
	optionText map[string]string
}

func (b *builder) warnf(format string, args ...any) {
	b.s.Warnings = append(b.s.Warnings, fmt.Errorf(format, args...))
}

// keyspace is the keyspace called name, made when a row names it first
// (a table whose keyspaces row is missing still reads).
func (b *builder) keyspace(name string) *Keyspace {
	ks, ok := b.byKs[name]
	if !ok {
		ks = &Keyspace{Name: name}
		b.byKs[name] = ks
		b.s.Keyspaces = append(b.s.Keyspaces, ks)
	}
	return ks
}

// byTable groups rows by keyspace and the table (or view) their second
// key column names.
func byTable(rs []row, col string) map[string][]row {
	out := map[string][]row{}
	for _, r := range rs {
		ks, _ := r.text("keyspace_name")
		t, _ := r.text(col)
		out[ks+"."+t] = append(out[ks+"."+t], r)
	}
	return out
}

func (b *builder) build(rows map[string][]row) {
	for _, r := range rows["keyspaces"] {
		name, _ := r.text("keyspace_name")
		ks := b.keyspace(name)
		ks.DurableWrites, _ = r.boolean("durable_writes")
		var err error
		if ks.Replication, err = r.textMap("replication"); err != nil {
			b.warnf("system_schema.keyspaces %s: %v", name, err)
		}
	}
	b.types(rows["types"])
	columns := byTable(rows["columns"], "table_name")
	dropped := byTable(rows["dropped_columns"], "table_name")
	indexes := byTable(rows["indexes"], "table_name")
	triggers := byTable(rows["triggers"], "table_name")
	masks := byTable(rows["column_masks"], "table_name")
	parts := func(name string) tableParts {
		return tableParts{columns[name], dropped[name], indexes[name], triggers[name], masks[name]}
	}
	for _, r := range rows["tables"] {
		ksName, _ := r.text("keyspace_name")
		name, _ := r.text("table_name")
		b.table(ksName, name, r, parts(ksName+"."+name), nil)
	}
	for _, r := range rows["views"] {
		ksName, _ := r.text("keyspace_name")
		name, _ := r.text("view_name")
		b.table(ksName, name, r, parts(ksName+"."+name), r)
	}
	if n := len(b.noColumns); n > 0 {
		list := b.noColumns
		if n > 8 {
			list = append(list[:8:8], fmt.Sprintf("and %d more", n-8))
		}
		b.warnf("system_schema.columns holds no columns for %s, which %s not in the schema: %s", words.Plural(n, "table"), map[bool]string{true: "is", false: "are"}[n == 1], strings.Join(list, ", "))
	}
	for _, ks := range b.s.Keyspaces {
		slices.SortFunc(ks.Tables, func(a, b *Table) int { return strings.Compare(a.Schema.Table, b.Schema.Table) })
	}
	slices.SortFunc(b.s.Keyspaces, func(a, b *Keyspace) int { return strings.Compare(a.Name, b.Name) })
}

// types defines the user types, each after those its fields use
// (Types.RawBuilder orders them so too).
func (b *builder) types(rs []row) {
	pending := slices.Clone(rs)
	for len(pending) > 0 {
		var later []row
		var lastErr error
		for _, r := range pending {
			ks, _ := r.text("keyspace_name")
			name, _ := r.text("type_name")
			names, err := r.texts("field_names")
			if err != nil {
				b.warnf("system_schema.types %s.%s: %v", ks, name, err)
				continue
			}
			types, err := r.texts("field_types")
			if err != nil {
				b.warnf("system_schema.types %s.%s: %v", ks, name, err)
				continue
			}
			if err := b.s.CQL.DefineType(ks, name, names, types); err != nil {
				lastErr = err
				later = append(later, r)
				continue
			}
			k := b.keyspace(ks)
			k.Types = append(k.Types, b.s.CQL.Types[ks+"."+name])
		}
		if len(later) == len(pending) {
			for _, r := range later {
				ks, _ := r.text("keyspace_name")
				name, _ := r.text("type_name")
				b.warnf("system_schema.types %s.%s: %v", ks, name, lastErr)
			}
			return
		}
		pending = later
	}
}

// tableParts are the rows of the other system tables about one table.
type tableParts struct {
	columns, dropped, indexes, triggers, masks []row
}

// keyColumns are the columns of a tables (or views) row that are no
// table option.
var notOptions = map[string]bool{
	"keyspace_name": true, "table_name": true, "view_name": true, "flags": true, "id": true,
	"base_table_id": true, "base_table_name": true, "where_clause": true, "include_all_columns": true,
}

// optionOrder is the order DESCRIBE prints the options in: 5.0's
// TableParams.appendCqlTo (alphabetical but for memtable, after
// compression), with 3.x's read_repair_chance and
// dclocal_read_repair_chance in their alphabetical places. Options a
// later version may add go after these, by name.
var optionOrder = []string{
	"additional_write_policy", "allow_auto_snapshot", "bloom_filter_fp_chance", "caching", "cdc", "comment",
	"compaction", "compression", "memtable", "crc_check_chance", "dclocal_read_repair_chance",
	"default_time_to_live", "extensions", "gc_grace_seconds", "incremental_backups", "max_index_interval",
	"memtable_flush_period_in_ms", "min_index_interval", "read_repair", "read_repair_chance", "speculative_retry",
}

// table makes one table (view: its views row) from its rows.
func (b *builder) table(ksName, name string, tr row, p tableParts, view row) {
	what := "table"
	if view != nil {
		what = "view"
	}
	fail := func(format string, args ...any) {
		b.warnf("%s %s.%s: %s; not in the schema", what, ksName, name, fmt.Sprintf(format, args...))
	}
	ts := &cqltype.TableSchema{Keyspace: ksName, Table: name}
	var err error
	if id, ok, err := tr.uuid("id"); err != nil {
		fail("%v", err)
		return
	} else if ok {
		ts.ID = id
	}
	if ts.Flags, err = tr.texts("flags"); err != nil {
		fail("%v", err)
		return
	}
	for i, f := range ts.Flags {
		ts.Flags[i] = strings.ToLower(f)
	}
	has := func(f string) bool { return slices.Contains(ts.Flags, f) }
	if view == nil {
		// CFMetaData.isCQLTable: not super, not dense, compound.
		ts.CompactStorage = has("super") || has("dense") || !has("compound")
	}
	if gc, ok, err := tr.int32("gc_grace_seconds"); err == nil && ok {
		ts.GCGraceSeconds, ts.HasGCGrace = int64(gc), true
	}
	if view != nil {
		ts.ViewWhere, _ = view.text("where_clause")
		ts.ViewAllColumns, _ = view.boolean("include_all_columns")
		base, _ := view.text("base_table_name")
		ts.ViewOf = ksName + "." + base
	}
	ts.Options = b.options(tr, view != nil, func(col string, err error) {
		b.warnf("%s %s.%s: option %s: %v", what, ksName, name, col, err)
	})
	if len(p.columns) == 0 {
		b.noColumns = append(b.noColumns, ksName+"."+name)
		return
	}
	if err := b.columns(ts, p.columns, p.masks); err != nil {
		fail("%v", err)
		return
	}
	t := &Table{Schema: ts}
	for _, r := range p.dropped {
		dc, err := b.dropped(ts, r)
		if err != nil {
			b.warnf("%s %s.%s: dropped column: %v", what, ksName, name, err)
			continue
		}
		t.Dropped = append(t.Dropped, dc)
	}
	for _, r := range p.indexes {
		ix := cqltype.Index{}
		ix.Name, _ = r.text("index_name")
		ix.Kind, _ = r.text("kind")
		if ix.Options, err = r.textMap("options"); err != nil {
			b.warnf("%s %s.%s: index %s: %v", what, ksName, name, ix.Name, err)
			continue
		}
		ts.Indexes = append(ts.Indexes, ix)
	}
	for _, r := range p.triggers {
		tg := Trigger{}
		tg.Name, _ = r.text("trigger_name")
		opts, err := r.textMap("options")
		if err != nil {
			b.warnf("%s %s.%s: trigger %s: %v", what, ksName, name, tg.Name, err)
			continue
		}
		tg.Class = opts["class"]
		t.Triggers = append(t.Triggers, tg)
	}
	if err := b.s.CQL.AddTable(ts); err != nil {
		fail("%v", err)
		return
	}
	ks := b.keyspace(ksName)
	ks.Tables = append(ks.Tables, t)
}

// options are a tables or views row's options, as DESCRIBE prints them.
func (b *builder) options(tr row, isView bool, warn func(string, error)) []cqltype.Option {
	if b.optionText == nil {
		b.optionText = map[string]string{}
	}
	out := make([]cqltype.Option, 0, len(optionOrder))
	add := func(col string) {
		v, ok := tr[col]
		if !ok || notOptions[col] || isView && col == "default_time_to_live" {
			return
		}
		key := col + "\x00" + string(v.b)
		s, ok := b.optionText[key]
		if !ok {
			var err error
			if s, err = optionCQL(v); err != nil {
				warn(col, err)
				return
			}
			b.optionText[key] = s
		}
		out = append(out, cqltype.Option{Name: col, Value: s})
	}
	for _, col := range optionOrder {
		add(col)
	}
	var later []string // options this package does not know, by name
	for col := range tr {
		if !notOptions[col] && !isOption[col] {
			later = append(later, col)
		}
	}
	slices.Sort(later)
	for _, col := range later {
		add(col)
	}
	return out
}

// isOption marks optionOrder's names.
var isOption = func() map[string]bool {
	m := map[string]bool{}
	for _, o := range optionOrder {
		m[o] = true
	}
	return m
}()

// columns fills a table's columns from its system_schema.columns rows,
// in create order (TableMetadata.allColumnsInCreateOrder): the partition
// key and clustering columns by position, then the static and the
// regular columns, each simple ones first, by name.
func (b *builder) columns(ts *cqltype.TableSchema, rs []row, masks []row) error {
	type col struct {
		c        cqltype.Column
		kind     string
		position int32
		desc     bool
	}
	var cols []col
	for _, r := range rs {
		var c col
		c.c.Name, _ = r.text("column_name")
		c.kind, _ = r.text("kind")
		c.kind = strings.ToLower(c.kind)
		p, _, err := r.int32("position")
		if err != nil {
			return fmt.Errorf("column %s: %v", c.c.Name, err)
		}
		c.position = p
		order, _ := r.text("clustering_order")
		c.desc = strings.EqualFold(order, "desc")
		typ, ok := r.text("type")
		if !ok {
			return fmt.Errorf("column %s has no type", c.c.Name)
		}
		if c.c.Type, err = b.s.CQL.ColumnType(ts.Keyspace, typ); err != nil {
			return fmt.Errorf("column %s: type %q: %v", c.c.Name, typ, err)
		}
		switch c.kind {
		case "partition_key", "clustering", "regular":
		case "static":
			c.c.Static = true
		default:
			return fmt.Errorf("column %s: unknown kind %q", c.c.Name, c.kind)
		}
		// A dense table without a value column has a hidden one of type
		// empty (CompactTableMetadata's hidden columns): no CQL column.
		if c.kind == "regular" && c.c.Type.Kind == cqltype.Empty && ts.CompactStorage {
			continue
		}
		cols = append(cols, c)
	}
	rank := map[string]int{"partition_key": 0, "clustering": 1, "static": 2, "regular": 3}
	slices.SortFunc(cols, func(a, b col) int {
		if c := cmp.Compare(rank[a.kind], rank[b.kind]); c != 0 {
			return c
		}
		if a.kind == "partition_key" || a.kind == "clustering" {
			return cmp.Compare(a.position, b.position)
		}
		if ca, cb := a.c.Type.IsMultiCell(), b.c.Type.IsMultiCell(); ca != cb {
			if ca {
				return 1
			}
			return -1
		}
		return strings.Compare(a.c.Name, b.c.Name)
	})
	maskOf := map[string]string{}
	for _, r := range masks {
		name, _ := r.text("column_name")
		m, err := mask(r)
		if err != nil {
			return fmt.Errorf("column %s: mask: %v", name, err)
		}
		maskOf[name] = m
	}
	for _, c := range cols {
		c.c.Mask = maskOf[c.c.Name]
		ts.Columns = append(ts.Columns, c.c)
		switch c.kind {
		case "partition_key":
			ts.PartitionKey = append(ts.PartitionKey, c.c.Name)
		case "clustering":
			ts.Clustering = append(ts.Clustering, cqltype.ClusteringColumn{Name: c.c.Name, Descending: c.desc})
		}
	}
	if len(ts.PartitionKey) == 0 {
		return fmt.Errorf("no partition key column in system_schema.columns")
	}
	return nil
}

// mask is a column_masks row as ColumnMask prints it: the function's
// name and its partial arguments as CQL literals.
func mask(r row) (string, error) {
	fks, _ := r.text("function_keyspace")
	fn, _ := r.text("function_name")
	types, err := r.texts("function_argument_types")
	if err != nil {
		return "", err
	}
	vals, err := r.texts("function_argument_values")
	if err != nil {
		return "", err
	}
	nulls, err := r.booleans("function_argument_nulls")
	if err != nil {
		return "", err
	}
	var args []string
	for i, v := range vals {
		switch {
		case i < len(nulls) && nulls[i]:
			args = append(args, "null")
		case i < len(types) && quotedLiteral[strings.ToLower(types[i])]:
			args = append(args, quote(v))
		default:
			args = append(args, v)
		}
	}
	name := fn
	if fks != "" {
		name = fks + "." + fn
	}
	return name + "(" + strings.Join(args, ", ") + ")", nil
}

// quotedLiteral are the types whose CQL literals are strings.
var quotedLiteral = map[string]bool{"text": true, "varchar": true, "ascii": true, "inet": true, "date": true, "time": true, "timestamp": true}

// dropped records a dropped_columns row on the table: the column's
// drop time, and the column itself when it has not been added again.
func (b *builder) dropped(ts *cqltype.TableSchema, r row) (DroppedColumn, error) {
	var dc DroppedColumn
	dc.Name, _ = r.text("column_name")
	dc.Kind, _ = r.text("kind")
	dc.Type, _ = r.text("type")
	ms, ok, err := r.timestamp("dropped_time")
	if err != nil {
		return dc, fmt.Errorf("%s: %v", dc.Name, err)
	}
	if !ok {
		return dc, fmt.Errorf("%s has no dropped_time", dc.Name)
	}
	dc.Time = ms * 1000
	if c := ts.Column(dc.Name); c != nil {
		c.DroppedTime = dc.Time // added again since
		return dc, nil
	}
	typ, err := cqltype.ParseCQL(dc.Type)
	if err != nil {
		return dc, fmt.Errorf("%s: type %q: %v", dc.Name, dc.Type, err)
	}
	ts.Columns = append(ts.Columns, cqltype.Column{Name: dc.Name, Type: typ, Static: strings.EqualFold(dc.Kind, "static"),
		Dropped: true, DroppedTime: dc.Time})
	return dc, nil
}
