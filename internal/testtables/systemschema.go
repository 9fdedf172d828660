package testtables

import (
	"cmp"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// SystemSchemaOptions says how SystemSchema writes a node's schema.
type SystemSchemaOptions struct {
	// Layout is the Cassandra version whose system_schema columns are
	// written: "3.11", "4.0", "4.1" or "5.0" (SchemaKeyspace on each
	// branch).
	Layout string
	// Version is the sstable format version (me, nb, oa...).
	Version format.Version
	// Timestamp is every cell's write time, in microseconds.
	Timestamp int64
	// Generation names the sstables ("1" by default): a second call with
	// another generation writes a later flush beside the first.
	Generation string
}

// SystemSchema writes, with the project's writer, the system_schema
// tables of a node whose schema is sch into dataDir/system_schema/
// <table>-<id>/ (the ids Cassandra derives from the names), one sstable
// per table, as the node writes them (SchemaKeyspace's
// makeCreateTableMutation and its helpers): a keyspaces row per keyspace
// of sch's tables and types, a tables row (views row for a view) with the
// table's id, flags and the layout's default options (gc_grace_seconds
// from the table), a columns row per column (dropped ones in
// dropped_columns, with their drop times in milliseconds), a types row per
// user type, an indexes row per index. Tables without an ID get one
// derived from their name.
func SystemSchema(dataDir string, sch *cqltype.Schema, o SystemSchemaOptions) error {
	if o.Generation == "" {
		o.Generation = "1"
	}
	w := &schemaWriter{o: o, parts: map[string]map[string][]sysRow{}}
	kss := map[string]bool{}
	for _, t := range sch.Tables {
		kss[t.Keyspace] = true
		if err := w.table(t); err != nil {
			return err
		}
	}
	for _, key := range sortedTypeKeys(sch.Types) {
		ut := sch.Types[key]
		kss[ut.Keyspace] = true
		var types []string
		for _, p := range ut.Params {
			types = append(types, p.CQL())
		}
		w.add("types", ut.Keyspace, []string{ut.Name}, map[string][]byte{
			"field_names": textCollection(ut.FieldNames), "field_types": textCollection(types)})
	}
	for ks := range kss {
		w.add("keyspaces", ks, nil, map[string][]byte{
			"durable_writes": {1},
			"replication":    textMap(map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}),
		})
	}
	for _, name := range []string{"keyspaces", "tables", "columns", "dropped_columns", "types", "indexes", "views", "triggers", "column_masks"} {
		if len(w.parts[name]) == 0 {
			continue // the writer makes no empty sstable: a table no row was written to has none
		}
		if err := w.write(filepath.Join(dataDir, "system_schema"), name); err != nil {
			return err
		}
	}
	return nil
}

func sortedTypeKeys(m map[string]*cqltype.Type) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// SystemTableID is the id Cassandra gives system_schema table name
// (UUID.nameUUIDFromBytes of "system_schema" and the name: an MD5, with
// the version and variant bits of a type 3 UUID), 32 hex digits.
func SystemTableID(name string) string { return nameUUID("system_schema" + name) }

func nameUUID(s string) string {
	h := md5.Sum([]byte(s))
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	return hex.EncodeToString(h[:])
}

// sysRow is one row of a system table: its clustering and its cells by
// column name.
type sysRow struct {
	clustering []string
	cells      map[string][]byte
}

type schemaWriter struct {
	o     SystemSchemaOptions
	parts map[string]map[string][]sysRow // table -> keyspace -> rows
}

func (w *schemaWriter) add(table, ks string, clustering []string, cells map[string][]byte) {
	if w.parts[table] == nil {
		w.parts[table] = map[string][]sysRow{}
	}
	w.parts[table][ks] = append(w.parts[table][ks], sysRow{clustering, cells})
}

// table adds a table's (or view's) rows.
func (w *schemaWriter) table(t *cqltype.TableSchema) error {
	id := t.ID
	if id == "" {
		h := nameUUID(t.Keyspace + t.Table)
		id = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	idBytes, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(idBytes) != 16 {
		return fmt.Errorf("table %s: id %q is not a UUID", t.Name(), id)
	}
	cells := w.options(t)
	cells["id"] = idBytes
	if t.ViewOf != "" {
		_, base, _ := strings.Cut(t.ViewOf, ".")
		cells["base_table_id"] = idBytes // a test's view needs no real base id
		cells["base_table_name"] = []byte(base)
		cells["where_clause"] = []byte(t.ViewWhere)
		cells["include_all_columns"] = boolean(t.ViewAllColumns)
		w.add("views", t.Keyspace, []string{t.Table}, cells)
	} else {
		flags := t.Flags
		if flags == nil {
			flags = []string{"compound"}
		}
		cells["flags"] = textCollection(flags)
		w.add("tables", t.Keyspace, []string{t.Table}, cells)
	}
	for _, c := range t.Columns {
		if c.Dropped || c.DroppedTime > 0 {
			kind := "regular"
			if c.Static {
				kind = "static"
			}
			w.add("dropped_columns", t.Keyspace, []string{t.Table, c.Name}, map[string][]byte{
				"dropped_time": int64Bytes(c.DroppedTime / 1000), "kind": []byte(kind), "type": []byte(c.Type.CQL())})
			if c.Dropped {
				continue
			}
		}
		kind, pos, order := "regular", int32(-1), "none"
		if c.Static {
			kind = "static"
		}
		if i := slices.Index(t.PartitionKey, c.Name); i >= 0 {
			kind, pos = "partition_key", int32(i)
		}
		for i, cc := range t.Clustering {
			if cc.Name == c.Name {
				kind, pos, order = "clustering", int32(i), "asc"
				if cc.Descending {
					order = "desc"
				}
			}
		}
		w.add("columns", t.Keyspace, []string{t.Table, c.Name}, map[string][]byte{
			"clustering_order": []byte(order), "column_name_bytes": []byte(c.Name), "kind": []byte(kind),
			"position": int32Bytes(pos), "type": []byte(c.Type.CQL())})
	}
	for _, ix := range t.Indexes {
		w.add("indexes", t.Keyspace, []string{t.Table, ix.Name}, map[string][]byte{"kind": []byte(ix.Kind), "options": textMap(ix.Options)})
	}
	return nil
}

// options are a tables row's options as the layout's version writes its
// defaults (TableParams), gc_grace_seconds the table's.
func (w *schemaWriter) options(t *cqltype.TableSchema) map[string][]byte {
	gc := int64(864000)
	if t.HasGCGrace {
		gc = t.GCGraceSeconds
	}
	c := map[string][]byte{
		"bloom_filter_fp_chance":      float64Bytes(0.01),
		"caching":                     textMap(map[string]string{"keys": "ALL", "rows_per_partition": "NONE"}),
		"comment":                     []byte{},
		"compaction":                  textMap(map[string]string{"class": "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy", "max_threshold": "32", "min_threshold": "4"}),
		"compression":                 textMap(map[string]string{"chunk_length_in_kb": "16", "class": "org.apache.cassandra.io.compress.LZ4Compressor"}),
		"crc_check_chance":            float64Bytes(1),
		"dclocal_read_repair_chance":  float64Bytes(0),
		"default_time_to_live":        int32Bytes(0),
		"extensions":                  textMap(nil),
		"gc_grace_seconds":            int32Bytes(int32(gc)),
		"max_index_interval":          int32Bytes(2048),
		"memtable_flush_period_in_ms": int32Bytes(0),
		"min_index_interval":          int32Bytes(128),
		"read_repair_chance":          float64Bytes(0),
		"speculative_retry":           []byte("99PERCENTILE"),
	}
	if w.o.Layout == "3.11" {
		c["dclocal_read_repair_chance"] = float64Bytes(0.1)
		return c
	}
	c["speculative_retry"] = []byte("99p")
	c["additional_write_policy"] = []byte("99p")
	c["cdc"] = boolean(false)
	c["read_repair"] = []byte("BLOCKING")
	if w.o.Layout == "4.0" {
		return c
	}
	c["memtable"] = []byte("default")
	if w.o.Layout == "4.1" {
		return c
	}
	c["allow_auto_snapshot"] = boolean(true)
	c["incremental_backups"] = boolean(true)
	return c
}

// systemColumns are the regular columns of each system table on a
// layout, with their types (SchemaKeyspace's CREATE TABLE statements).
func (w *schemaWriter) systemColumns(table string) (clustering int, cols map[string]string) {
	const m = "org.apache.cassandra.db.marshal."
	text, dbl, i32, boolT, uuid, ts := m+"UTF8Type", m+"DoubleType", m+"Int32Type", m+"BooleanType", m+"UUIDType", m+"TimestampType"
	frozenMap := m + "FrozenType(" + m + "MapType(" + text + "," + text + "))"
	textList := m + "FrozenType(" + m + "ListType(" + text + "))"
	textSet := m + "FrozenType(" + m + "SetType(" + text + "))"
	options := map[string]string{
		"bloom_filter_fp_chance": dbl, "caching": frozenMap, "comment": text, "compaction": frozenMap, "compression": frozenMap,
		"crc_check_chance": dbl, "dclocal_read_repair_chance": dbl, "default_time_to_live": i32,
		"extensions": m + "FrozenType(" + m + "MapType(" + text + "," + m + "BytesType))", "gc_grace_seconds": i32, "id": uuid,
		"max_index_interval": i32, "memtable_flush_period_in_ms": i32, "min_index_interval": i32, "read_repair_chance": dbl,
		"speculative_retry": text,
	}
	if w.o.Layout != "3.11" {
		options["additional_write_policy"], options["cdc"], options["read_repair"] = text, boolT, text
	}
	if w.o.Layout == "4.1" || w.o.Layout == "5.0" {
		options["memtable"] = text
	}
	if w.o.Layout == "5.0" {
		options["allow_auto_snapshot"], options["incremental_backups"] = boolT, boolT
	}
	switch table {
	case "keyspaces":
		return 0, map[string]string{"durable_writes": boolT, "replication": frozenMap}
	case "tables":
		options["flags"] = textSet
		return 1, options
	case "views":
		options["base_table_id"], options["base_table_name"], options["where_clause"], options["include_all_columns"] = uuid, text, text, boolT
		return 1, options
	case "columns":
		return 2, map[string]string{"clustering_order": text, "column_name_bytes": m + "BytesType", "kind": text, "position": i32, "type": text}
	case "dropped_columns":
		return 2, map[string]string{"dropped_time": ts, "kind": text, "type": text}
	case "types":
		return 1, map[string]string{"field_names": textList, "field_types": textList}
	case "indexes":
		return 2, map[string]string{"kind": text, "options": frozenMap}
	case "triggers":
		return 2, map[string]string{"options": frozenMap}
	case "column_masks":
		return 2, map[string]string{"function_keyspace": text, "function_name": text, "function_argument_types": textList,
			"function_argument_values": textList, "function_argument_nulls": m + "FrozenType(" + m + "ListType(" + boolT + "))"}
	}
	panic("testtables: no system table " + table)
}

// write writes one system table's sstable.
func (w *schemaWriter) write(dir, table string) error {
	nClust, colTypes := w.systemColumns(table)
	const text = "org.apache.cassandra.db.marshal.UTF8Type"
	var cols []rows.Column
	for name, class := range colTypes {
		t, err := cqltype.Parse(class)
		if err != nil {
			return err
		}
		cols = append(cols, rows.Column{Name: name, Type: class, Fixed: t.FixedLength()})
	}
	rows.SortColumns(cols)
	idx := map[string]int{}
	h := &stats.Header{MinTimestamp: w.o.Timestamp, MinLocalDeletionTime: stats.DeletionTimeEpoch,
		KeyType: stats.TypeName{Class: text}}
	fixed := make([]int, nClust)
	for i := range fixed {
		h.ClusteringTypes = append(h.ClusteringTypes, stats.TypeName{Class: text})
		fixed[i] = -1
	}
	for i, c := range cols {
		idx[c.Name] = i
		h.RegularColumns = append(h.RegularColumns, stats.Column{Name: []byte(c.Name), Type: stats.TypeName{Class: c.Type}})
	}
	for i := range h.ClusteringTypes {
		if err := resolveTypeName(&h.ClusteringTypes[i]); err != nil {
			return err
		}
	}
	for i := range h.RegularColumns {
		if err := resolveTypeName(&h.RegularColumns[i].Type); err != nil {
			return err
		}
	}
	if err := resolveTypeName(&h.KeyType); err != nil {
		return err
	}
	sch := &rows.Schema{Version: w.o.Version, ClusteringFixed: fixed, Regular: cols, MinTimestamp: w.o.Timestamp, MinLocalDeletionTime: stats.DeletionTimeEpoch}
	out := filepath.Join(dir, table+"-"+SystemTableID(table))
	sw, err := writer.NewSSTableWriter(out, writer.Config{Version: w.o.Version, Generation: w.o.Generation, Header: h, Schema: sch,
		Partitioner: stats.Murmur3Partitioner})
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(w.parts[table]))
	for ks := range w.parts[table] {
		keys = append(keys, ks)
	}
	slices.SortFunc(keys, func(a, b string) int { return token.Murmur3.CompareKeys([]byte(a), []byte(b)) })
	for _, ks := range keys {
		rs := w.parts[table][ks]
		slices.SortFunc(rs, func(a, b sysRow) int { return slices.Compare(a.clustering, b.clustering) })
		if err := sw.StartPartition([]byte(ks), deletiontime.Live); err != nil {
			sw.Abort()
			return err
		}
		for _, r := range rs {
			u := &rows.Unfiltered{Kind: rows.KindRow, Deletion: deletiontime.Live,
				Liveness: rows.Liveness{HasTimestamp: true, Timestamp: w.o.Timestamp}}
			for _, c := range r.clustering {
				u.Clustering = append(u.Clustering, []byte(c))
			}
			for name, v := range r.cells {
				i, ok := idx[name]
				if !ok {
					continue // not in this layout
				}
				u.Cells = append(u.Cells, rows.Cell{Column: i, Timestamp: w.o.Timestamp, Value: v})
			}
			slices.SortFunc(u.Cells, func(a, b rows.Cell) int { return cmp.Compare(a.Column, b.Column) })
			if err := sw.Add(u); err != nil {
				sw.Abort()
				return err
			}
		}
		if err := sw.EndPartition(); err != nil {
			sw.Abort()
			return err
		}
	}
	_, err = sw.Finish()
	return err
}

func resolveTypeName(tn *stats.TypeName) error {
	t, err := cqltype.Parse(tn.Class)
	tn.Type = t
	return err
}

// The values as Cassandra serializes them.

func int32Bytes(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func int64Bytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func float64Bytes(f float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f))
}
func boolean(b bool) []byte {
	if b {
		return []byte{1}
	}
	return []byte{0}
}

// textCollection is a frozen list or set of text: the count, then each
// element with its length (CollectionSerializer, protocol v3+).
func textCollection(es []string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(es)))
	for _, e := range es {
		b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

// textMap is a frozen map<text, text>, its keys in order.
func textMap(m map[string]string) []byte {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := binary.BigEndian.AppendUint32(nil, uint32(len(keys)))
	for _, k := range keys {
		b = binary.BigEndian.AppendUint32(b, uint32(len(k)))
		b = append(b, k...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(m[k])))
		b = append(b, m[k]...)
	}
	return b
}
