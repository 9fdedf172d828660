package inspect

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/reader"
)

// Names are the key column names used when printing a table definition.
type Names struct {
	Keyspace, Table string
	PartitionKey    []string
	Clustering      []string
	// Dropped are the columns the schema says were dropped (and not added
	// again): a query lists none of them.
	Dropped []string
}

// DefaultNames derives placeholder names: keyspace and table from a
// Cassandra data directory (<keyspace>/<table>-<id>/), key columns as
// key, key1.. and clustering columns as clustering1...
func DefaultNames(s *sstable.SSTable) Names {
	n := Names{Keyspace: "keyspace", Table: "table"}
	dir := filepath.Clean(s.Desc().Dir)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // an sstable named from inside its directory has the directory "."
	}
	if td := format.TableOf(dir); td.Index != "" {
		n.Keyspace, n.Table = td.Keyspace, td.Table // a secondary index's own table, "<table>.<index>"
	} else if t, ok := format.TableOfDir(filepath.Base(dir)); ok {
		n.Table = t
		if ks := filepath.Base(filepath.Dir(dir)); ks != "." && ks != string(filepath.Separator) {
			n.Keyspace = ks
		}
	} else if b := filepath.Base(dir); b != "." {
		n.Table = b
	}
	kc := 1
	if s.KeyType().Kind == cqltype.Composite {
		kc = len(s.KeyType().Params)
	}
	for i := 0; i < kc; i++ {
		if kc == 1 {
			n.PartitionKey = append(n.PartitionKey, "key")
		} else {
			n.PartitionKey = append(n.PartitionKey, fmt.Sprintf("key%d", i+1))
		}
	}
	for i := range s.ClusteringTypes() {
		n.Clustering = append(n.Clustering, fmt.Sprintf("clustering%d", i+1))
	}
	return n
}

// LoadSchema reads a CREATE TABLE statement from file, checks it against
// the sstable's serialization header and returns the names it gives.
func LoadSchema(s *sstable.SSTable, file string) (Names, error) {
	src, err := reader.ReadFile(file) // refuses FIFOs and devices: os.ReadFile would block
	if err != nil {
		return Names{}, fmt.Errorf("--schema: %w", err)
	}
	ts, err := parseTable(string(src))
	if err != nil {
		return Names{}, fmt.Errorf("--schema %s: %w", file, err)
	}
	if err := CheckSchema(s, ts); err != nil {
		return Names{}, fmt.Errorf("--schema %s does not match %s: %w", file, s.Path("Statistics.db"), err)
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

// parseTable takes the first CREATE TABLE of a script (CREATE TYPE
// statements before it resolve user types).
func parseTable(src string) (*cqltype.TableSchema, error) {
	sch, err := cqltype.ParseSchema(src)
	if err != nil {
		return nil, err
	}
	if len(sch.Tables) == 0 {
		return nil, fmt.Errorf("no CREATE TABLE statement found")
	}
	return sch.Tables[0], nil
}

// CheckSchema compares a table definition with the serialization header:
// the key, clustering and every stored column must have the same types.
//
// Where the schema declares a UDT column frozen and the header records it
// as a plain (multi-cell) UserType, the schema wins: Cassandra 3.x wrote
// frozen UDTs that way (CASSANDRA-15035) and SSTableHeaderFix repaired such
// headers from the schema. The sstable then reads the column as frozen.
func CheckSchema(s *sstable.SSTable, ts *cqltype.TableSchema) error {
	diffs, err := compareSchema(s, ts)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s", diffs[0])
	}
	return nil
}

// compareSchema is CheckSchema's comparison. A shape that cannot be the
// table's (key or clustering columns of another number, a column static
// in one and not the other) is the error; columns whose types differ, or
// that the schema lacks, are the differences, each worded as CheckSchema
// words it.
func compareSchema(s *sstable.SSTable, ts *cqltype.TableSchema) (diffs []string, err error) {
	for _, c := range ts.Columns {
		if c.Type.Kind == cqltype.UDT && !c.Type.IsMultiCell() {
			s.FreezeColumn(c.Name, "the schema declares it "+c.Type.CQL()+"; Cassandra 3.x recorded frozen UDTs as non-frozen in the header (CASSANDRA-15035), and the schema wins, as in SSTableHeaderFix")
		}
	}
	var keyTypes []*cqltype.Type
	if s.KeyType().Kind == cqltype.Composite {
		keyTypes = s.KeyType().Params
	} else {
		keyTypes = []*cqltype.Type{s.KeyType()}
	}
	if len(ts.PartitionKey) != len(keyTypes) {
		return nil, fmt.Errorf("partition key has %d columns in the schema, %d in the sstable", len(ts.PartitionKey), len(keyTypes))
	}
	diff := func(err error) {
		if err != nil {
			diffs = append(diffs, err.Error())
		}
	}
	for i, name := range ts.PartitionKey {
		diff(sameType("partition key column "+name, ts.Column(name), keyTypes[i]))
	}
	if len(ts.Clustering) != len(s.ClusteringTypes()) {
		return nil, fmt.Errorf("%d clustering columns in the schema, %d in the sstable", len(ts.Clustering), len(s.ClusteringTypes()))
	}
	for i, c := range ts.Clustering {
		diff(sameType("clustering column "+c.Name, ts.Column(c.Name), s.ClusteringTypes()[i]))
	}
	check := func(cols []string, types []*cqltype.Type, static bool) error {
		for i, name := range cols {
			col := ts.Column(name)
			if col == nil {
				diffs = append(diffs, fmt.Sprintf("column %s is in the sstable but not in the schema (dropped?)", name))
				continue
			}
			if col.Static != static {
				return fmt.Errorf("column %s: static=%v in the schema, %v in the sstable", name, col.Static, static)
			}
			diff(sameType("column "+name, col, types[i]))
		}
		return nil
	}
	if err := check(columnNames(s.Schema().Static), s.StaticTypes(), true); err != nil {
		return nil, err
	}
	if err := check(columnNames(s.Schema().Regular), s.RegularTypes(), false); err != nil {
		return nil, err
	}
	return diffs, nil
}

func sameType(what string, col *cqltype.Column, stored *cqltype.Type) error {
	if col == nil {
		return fmt.Errorf("%s is not defined in the schema", what)
	}
	a, b := normalizeCQL(col.Type.CQL()), normalizeCQL(stored.CQL())
	if a != b {
		return fmt.Errorf("%s: schema says %s, sstable stores %s", what, col.Type.CQL(), stored.CQL())
	}
	return nil
}

// normalizeCQL drops keyspace qualifiers and quoting so that a UDT named in
// a schema file matches the header's keyspace-qualified one.
func normalizeCQL(s string) string {
	s = strings.ReplaceAll(s, `"`, "")
	s = qualified.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "")
}

var qualified = regexp.MustCompile(`[A-Za-z0-9_]+\.`)

func columnNames(cols []rows.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// CreateTable rebuilds the CREATE TABLE statement the sstable implies.
//
// Columns whose header type was corrected (HeaderFixes) are preceded by a
// CQL comment that says so.
func CreateTable(s *sstable.SSTable, n Names) string {
	var b strings.Builder
	for _, f := range s.HeaderFixes() {
		fmt.Fprintf(&b, "-- header corrected: %s\n", f)
	}
	fmt.Fprintf(&b, "CREATE TABLE %s.%s (\n", quoteIdent(n.Keyspace), quoteIdent(n.Table))
	keyTypes := []*cqltype.Type{s.KeyType()}
	if s.KeyType().Kind == cqltype.Composite {
		keyTypes = s.KeyType().Params
	}
	for i, t := range keyTypes {
		fmt.Fprintf(&b, "    %s %s,\n", quoteIdent(n.PartitionKey[i]), t.CQL())
	}
	for i, t := range s.ClusteringTypes() {
		fmt.Fprintf(&b, "    %s %s,\n", quoteIdent(n.Clustering[i]), unreversed(t).CQL())
	}
	for i, c := range s.Schema().Static {
		fmt.Fprintf(&b, "    %s %s static,\n", quoteIdent(c.Name), s.StaticTypes()[i].CQL())
	}
	for i, c := range s.Schema().Regular {
		fmt.Fprintf(&b, "    %s %s,\n", quoteIdent(c.Name), s.RegularTypes()[i].CQL())
	}
	pk := make([]string, len(n.PartitionKey))
	for i, k := range n.PartitionKey {
		pk[i] = quoteIdent(k)
	}
	key := strings.Join(pk, ", ")
	if len(pk) > 1 {
		key = "(" + key + ")"
	}
	for _, c := range n.Clustering {
		key += ", " + quoteIdent(c)
	}
	fmt.Fprintf(&b, "    PRIMARY KEY (%s)\n)", key)
	var order []string
	for i, t := range s.ClusteringTypes() {
		dir := "ASC"
		if t.Reversed {
			dir = "DESC"
		}
		order = append(order, quoteIdent(n.Clustering[i])+" "+dir)
	}
	if len(order) > 0 {
		fmt.Fprintf(&b, " WITH CLUSTERING ORDER BY (%s)", strings.Join(order, ", "))
	}
	if ci := s.Data().Info(); ci != nil {
		sep := " WITH"
		if len(order) > 0 {
			sep = "\n    AND"
		}
		class := ci.Compressor
		if i := strings.LastIndexByte(class, '.'); i >= 0 {
			class = class[i+1:]
		}
		fmt.Fprintf(&b, "%s compression = {'class': '%s', 'chunk_length_in_kb': '%d'}", sep, class, ci.ChunkLength/1024)
	} else {
		sep := " WITH"
		if len(order) > 0 {
			sep = "\n    AND"
		}
		fmt.Fprintf(&b, "%s compression = {'enabled': 'false'}", sep)
	}
	b.WriteString(";\n")
	return b.String()
}

func unreversed(t *cqltype.Type) *cqltype.Type {
	if !t.Reversed {
		return t
	}
	c := *t
	c.Reversed = false
	return &c
}

var plainIdent = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func quoteIdent(s string) string {
	if plainIdent.MatchString(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
