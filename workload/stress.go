package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"gopkg.in/yaml.v3"
)

// A cassandra-stress user profile (tools/stress/.../StressYaml.java and
// StressProfile.java) describes a table by its CREATE TABLE statement and
// its data by per-column distributions. ParseProfile recognises one by its
// fields and turns it into a Profile whose Stress is set; NewGenerator then
// replays its inserts and internal/generate writes its data. docs/workload.md
// maps every field to what is done with it.

// stressFields are the top-level fields of a cassandra-stress profile. None
// is a field of the native format, so one of them marks the file.
var stressFields = []string{
	"specname", "keyspace", "keyspace_definition", "table", "table_definition",
	"extra_definitions", "columnspec", "insert", "queries", "token_range_queries",
	// Cassandra's documentation example (doc/.../stress-example.yaml) spells
	// specname this way; it only labels the profile.
	"spacenam",
}

// Defaults of every column, as in cassandra-stress's generate/values/Generator.java
// (timestamps and timeuuids draw their population from 50 years of
// milliseconds, generate/values/Dates.java).
const (
	stressDefaultSize       = "uniform(4..8)"
	stressDefaultPopulation = "uniform(1..100B)"
	stressDatePopulation    = "uniform(1..1576800000000)"
	stressDefaultCluster    = "fixed(1)"
	stressDefaultSeeds      = 1_000_000 // -pop seq=1..N with no n=: N is a million
)

// Limits that keep a typo from exhausting memory or time: values per
// clustering level, rows per partition, partitions per operation.
const (
	maxStressLevel   = 1 << 20
	maxStressRows    = 1 << 32
	maxStressBatch   = 1 << 16
	maxStressColumns = 1 << 15
	maxKeyValueBytes = 1<<16 - 1 // Cassandra refuses longer key and clustering values
)

// StressTable is the table and write pattern of a cassandra-stress user
// profile (Profile.Stress). A Profile carrying one replays stress's insert
// operation: Partitions is the number of partition seeds (-pop seq=1..N),
// and each seed's key, rows and values follow the columnspec.
type StressTable struct {
	// File is the profile's path ("" when parsed from memory).
	File            string
	Keyspace, Table string
	// Schema is table_definition as parsed.
	Schema *cqltype.TableSchema
	// Ignored lists the profile's fields that change nothing in the data or
	// the memtables (docs/workload.md says why for each).
	Ignored []string

	pk, ck []*stressCol
	values []*stressCol // static and regular columns, by name: Cell.Column indexes them
	schema Schema

	partitions stressDist  // insert.partitions: partitions per operation
	selectRow  stressRatio // insert.select: chance of each first-clustering value
	population stressRatio // insert.row-population: share of value columns set
	keyOnly    bool        // every column is in the primary key: INSERT writes a row marker
}

// stressCol is one column with its distributions.
type stressCol struct {
	name       string
	typ        *cqltype.Type
	population stressDist
	size       stressDist
	cluster    stressDist
	salt       uint64
	column     int // index into StressTable.values for static and regular columns
	static     bool
}

// QualifiedName is "keyspace.table".
func (t *StressTable) QualifiedName() string { return t.Keyspace + "." + t.Table }

// Columns are the table's static and regular columns in the order
// Cell.Column indexes them: by name.
func (t *StressTable) Columns() []Column { return t.schema.Columns }

// hasStressField reports whether a decoded document's top level has a
// cassandra-stress field.
func hasStressField(doc *yaml.Node) bool {
	m := doc
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if slices.Contains(stressFields, m.Content[i].Value) {
			return true
		}
	}
	return false
}

// stressYAML is a profile's fields as read, before they are checked
// against the table.
type stressYAML struct {
	specname, keyspace, table, tableDef string
	columnspec                          []stressColSpec
	insert                              map[string]string
	ignored                             []string
}

type stressColSpec struct {
	name, size, population, cluster string
	field                           string // columnspec[i]
}

// parseStress reads a cassandra-stress profile.
func parseStress(data []byte, file string) (*Profile, error) {
	fail := func(field string, err error) (*Profile, error) {
		return nil, &ProfileError{File: file, Field: field, Err: err}
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fail("", errors.New("empty profile"))
		}
		return fail("", err)
	}
	y, field, err := readStressYAML(&doc)
	if err != nil {
		return fail(field, err)
	}
	t, field, err := compileStress(y)
	if err != nil {
		return fail(field, err)
	}
	t.File = file
	name := y.specname
	if name == "" {
		name = t.QualifiedName()
	}
	p := &Profile{Name: name, Description: "cassandra-stress profile of " + t.QualifiedName(),
		Ops: 1_000_000, Partitions: stressDefaultSeeds, Stress: t}
	if err := p.Validate(); err != nil { // fills the timestamp
		return nil, err
	}
	return p, nil
}

// scalarString reads a scalar field's text.
func scalarString(n *yaml.Node, field string) (string, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: %s must be a single value", n.Line, field)
	}
	return n.Value, nil
}

// mapping returns the key and value nodes of a mapping field.
func mapping(n *yaml.Node, field string) ([]*yaml.Node, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s must be a mapping of name: value", n.Line, field)
	}
	return n.Content, nil
}

func readStressYAML(doc *yaml.Node) (*stressYAML, string, error) {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	top, err := mapping(root, "a cassandra-stress profile")
	if err != nil {
		return nil, "", err
	}
	y := &stressYAML{insert: map[string]string{}}
	seen := map[string]bool{}
	ignore := func(f string) {
		if !slices.Contains(y.ignored, f) {
			y.ignored = append(y.ignored, f)
		}
	}
	for i := 0; i+1 < len(top); i += 2 {
		k, v := top[i].Value, top[i+1]
		if seen[k] {
			return nil, k, fmt.Errorf("line %d: given twice", top[i].Line)
		}
		seen[k] = true
		switch k {
		case "specname", "spacenam", "keyspace", "table", "table_definition", "keyspace_definition":
			s, err := scalarString(v, k)
			if err != nil {
				return nil, k, err
			}
			switch k {
			case "specname", "spacenam":
				y.specname = s
				ignore(k)
			case "keyspace":
				y.keyspace = s
			case "table":
				y.table = s
			case "table_definition":
				y.tableDef = s
			case "keyspace_definition":
				ignore(k)
			}
		case "extra_definitions":
			if v.Kind != yaml.SequenceNode && !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
				return nil, k, fmt.Errorf("line %d: must be a list of CQL statements", v.Line)
			}
			ignore(k)
		case "columnspec":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				break
			}
			if v.Kind != yaml.SequenceNode {
				return nil, k, fmt.Errorf("line %d: must be a list of column specs", v.Line)
			}
			for ci, cn := range v.Content {
				field := fmt.Sprintf("columnspec[%d]", ci)
				kv, err := mapping(cn, field)
				if err != nil {
					return nil, field, err
				}
				cs := stressColSpec{field: field}
				got := map[string]bool{}
				for j := 0; j+1 < len(kv); j += 2 {
					// stress lower-cases the keys of a column spec.
					key := strings.ToLower(kv[j].Value)
					if got[key] {
						return nil, field + "." + key, fmt.Errorf("line %d: given twice", kv[j].Line)
					}
					got[key] = true
					s, err := scalarString(kv[j+1], field+"."+key)
					if err != nil {
						return nil, field + "." + key, err
					}
					switch key {
					case "name":
						cs.name = s
					case "size":
						cs.size = s
					case "population":
						cs.population = s
					case "cluster":
						cs.cluster = s
					default:
						return nil, field + "." + kv[j].Value, fmt.Errorf("line %d: unknown column spec option (want name, size, population, cluster)", kv[j].Line)
					}
				}
				if cs.name == "" {
					return nil, field + ".name", fmt.Errorf("line %d: missing", cn.Line)
				}
				y.columnspec = append(y.columnspec, cs)
			}
		case "insert":
			kv, err := mapping(v, k)
			if err != nil {
				return nil, k, err
			}
			for j := 0; j+1 < len(kv); j += 2 {
				key := strings.ToLower(kv[j].Value) // stress lower-cases these too
				field := "insert." + kv[j].Value
				switch key {
				case "partitions", "select", "row-population", "batchtype", "condition":
				default:
					return nil, field, fmt.Errorf("line %d: unknown insert option (want partitions, select, row-population, batchtype, condition)", kv[j].Line)
				}
				if _, dup := y.insert[key]; dup {
					return nil, field, fmt.Errorf("line %d: given twice", kv[j].Line)
				}
				s, err := scalarString(kv[j+1], field)
				if err != nil {
					return nil, field, err
				}
				y.insert[key] = s
				if key == "batchtype" || key == "condition" {
					ignore("insert." + key)
				}
			}
		case "queries", "token_range_queries":
			if err := checkStressQueries(k, v); err != nil {
				return nil, k, err
			}
			ignore(k)
		default:
			return nil, k, fmt.Errorf("line %d: unknown field of a cassandra-stress profile (known: %s)", top[i].Line, strings.Join(stressFields[:len(stressFields)-1], ", "))
		}
	}
	return y, "", nil
}

// checkStressQueries checks the shape of queries or token_range_queries:
// a mapping of names to their options (StressYaml.QueryDef, TokenRangeQueryDef).
func checkStressQueries(field string, v *yaml.Node) error {
	qs, err := mapping(v, field)
	if err != nil {
		return err
	}
	known := []string{"cql", "fields"}
	if field == "token_range_queries" {
		known = []string{"columns", "page_size"}
	}
	for i := 0; i+1 < len(qs); i += 2 {
		opts, err := mapping(qs[i+1], field+"."+qs[i].Value)
		if err != nil {
			return err
		}
		for j := 0; j+1 < len(opts); j += 2 {
			if !slices.Contains(known, opts[j].Value) {
				return fmt.Errorf("line %d: %s.%s: unknown option %q (want %s)", opts[j].Line, qs[i].Value, opts[j].Value, opts[j].Value, strings.Join(known, " or "))
			}
			if opts[j].Value == "fields" {
				switch s := strings.ToLower(opts[j+1].Value); s {
				case "samerow", "multirow":
				default:
					return fmt.Errorf("line %d: %s.fields: %q, want samerow or multirow", opts[j+1].Line, qs[i].Value, opts[j+1].Value)
				}
			}
		}
	}
	return nil
}

// compileStress checks the profile against its table and compiles the
// distributions.
func compileStress(y *stressYAML) (*StressTable, string, error) {
	if y.keyspace == "" {
		return nil, "keyspace", errors.New("missing: the profile must name its keyspace")
	}
	if y.table == "" {
		return nil, "table", errors.New("missing: the profile must name its table")
	}
	if strings.TrimSpace(y.tableDef) == "" {
		return nil, "table_definition", errors.New("missing: cassandra-stress can read the table from a running cluster, but here the profile must carry its CREATE TABLE")
	}
	ts, err := cqltype.ParseCreateTable(y.tableDef)
	if err != nil {
		return nil, "table_definition", err
	}
	if !strings.EqualFold(ts.Table, y.table) {
		return nil, "table_definition", fmt.Errorf("creates table %q, but the profile's table is %q", ts.Table, y.table)
	}
	t := &StressTable{Keyspace: y.keyspace, Table: y.table, Schema: ts, Ignored: y.ignored}
	specs := map[string]*stressColSpec{}
	for i := range y.columnspec {
		cs := &y.columnspec[i]
		if specs[cs.name] != nil {
			return nil, cs.field + ".name", fmt.Errorf("column %q has two column specs (%s and %s)", cs.name, specs[cs.name].field, cs.field)
		}
		if ts.Column(cs.name) == nil {
			var names []string
			for _, c := range ts.Columns {
				names = append(names, c.Name)
			}
			return nil, cs.field + ".name", fmt.Errorf("table %s has no column %q (columns: %s)", t.QualifiedName(), cs.name, strings.Join(names, ", "))
		}
		specs[cs.name] = cs
	}
	if len(ts.Columns) > maxStressColumns {
		return nil, "table_definition", fmt.Errorf("%d columns: at most %d", len(ts.Columns), maxStressColumns)
	}
	inKey := map[string]bool{}
	for _, k := range ts.PartitionKey {
		inKey[k] = true
	}
	for _, c := range ts.Clustering {
		inKey[c.Name] = true
	}
	compile := func(c *cqltype.Column, role string) (*stressCol, string, error) {
		sc := &stressCol{name: c.Name, typ: c.Type, static: c.Static, salt: saltOf(c.Name)}
		field := "table_definition"
		if err := stressTypeSupported(c.Type, role); err != nil {
			return nil, field, fmt.Errorf("column %s: %v", c.Name, err)
		}
		spec := specs[c.Name]
		size, pop, cluster := stressDefaultSize, stressDefaultPopulation, stressDefaultCluster
		if c.Type.Kind == cqltype.Timestamp || c.Type.Kind == cqltype.TimeUUID {
			pop = stressDatePopulation
		}
		if spec != nil {
			field = spec.field
			if spec.size != "" {
				size = spec.size
				if !usesSize(c.Type) {
					t.ignore(spec.field + ".size")
				}
			}
			if spec.population != "" {
				pop = spec.population
			}
			if spec.cluster != "" {
				cluster = spec.cluster
				if role != "clustering" {
					t.ignore(spec.field + ".cluster")
				}
			}
		}
		var err error
		if sc.size, err = parseStressDist(size); err != nil {
			return nil, field + ".size", err
		}
		if sc.population, err = parseStressDist(pop); err != nil {
			return nil, field + ".population", err
		}
		if sc.cluster, err = parseStressDist(cluster); err != nil {
			return nil, field + ".cluster", err
		}
		if role != "value" && usesSize(c.Type) && sc.size.maxValue() > maxKeyValueBytes {
			return nil, field + ".size", fmt.Errorf("%s allows values of %d bytes; a %s value is at most %d", size, sc.size.maxValue(), role, maxKeyValueBytes)
		}
		if role == "clustering" && sc.cluster.maxValue() > maxStressLevel {
			return nil, field + ".cluster", fmt.Errorf("%s yields up to %d values of %s per partition level; at most %d", cluster, sc.cluster.maxValue(), c.Name, maxStressLevel)
		}
		return sc, "", nil
	}
	keyLen := 0
	for _, k := range ts.PartitionKey {
		sc, field, err := compile(ts.Column(k), "partition key")
		if err != nil {
			return nil, field, err
		}
		t.pk = append(t.pk, sc)
		keyLen += maxStressValueLen(sc)
		if len(ts.PartitionKey) > 1 {
			keyLen += 3 // CompositeType's length and end-of-component bytes
		}
	}
	if keyLen > maxKeyValueBytes {
		return nil, "columnspec", fmt.Errorf("partition keys of up to %d bytes; Cassandra's limit is %d", keyLen, maxKeyValueBytes)
	}
	maxRows := 1.0
	for _, k := range ts.Clustering {
		sc, field, err := compile(ts.Column(k.Name), "clustering")
		if err != nil {
			return nil, field, err
		}
		t.ck = append(t.ck, sc)
		maxRows *= float64(max(sc.cluster.maxValue(), 1))
	}
	if maxRows > maxStressRows {
		return nil, "columnspec", fmt.Errorf("the cluster distributions allow partitions of %.0f rows; at most %d", maxRows, int64(maxStressRows))
	}
	var valueCols []*cqltype.Column
	for i := range ts.Columns {
		if c := &ts.Columns[i]; !inKey[c.Name] && !c.Dropped {
			valueCols = append(valueCols, c)
		}
	}
	slices.SortStableFunc(valueCols, func(a, b *cqltype.Column) int { return strings.Compare(a.Name, b.Name) })
	counters := 0
	for _, c := range valueCols {
		sc, field, err := compile(c, "value")
		if err != nil {
			return nil, field, err
		}
		if c.Type.IsCounter() {
			counters++
		}
		sc.column = len(t.values)
		t.values = append(t.values, sc)
		t.schema.Columns = append(t.schema.Columns, Column{Name: c.Name, Static: c.Static, Complex: c.Type.IsMultiCell()})
	}
	if counters > 0 && counters < len(valueCols) {
		return nil, "table_definition", errors.New("a table cannot mix counter and non-counter columns (Cassandra refuses it)")
	}
	t.keyOnly = len(valueCols) == 0
	t.schema.PartitionKey = append([]string(nil), ts.PartitionKey...)
	for _, c := range ts.Clustering {
		t.schema.Clustering = append(t.schema.Clustering, c.Name)
	}
	for _, f := range []struct{ key, def string }{{"partitions", "fixed(1)"}, {"select", "fixed(1)/1"}, {"row-population", "fixed(1)/1"}} {
		s := y.insert[f.key]
		if strings.TrimSpace(s) == "" {
			s = f.def
		}
		field := "insert." + f.key
		var err error
		if f.key == "partitions" {
			if t.partitions, err = parseStressDist(s); err != nil {
				return nil, field, err
			}
			switch {
			case t.partitions.maxValue() < 1:
				return nil, field, fmt.Errorf("%s never writes a partition", s)
			case t.partitions.maxValue() > maxStressBatch:
				return nil, field, fmt.Errorf("%s writes up to %d partitions per operation; at most %d", s, t.partitions.maxValue(), maxStressBatch)
			}
			continue
		}
		r, err := parseStressRatio(s)
		if err != nil {
			return nil, field, err
		}
		if f.key == "select" {
			if r.maxValue() <= 0 {
				return nil, field, fmt.Errorf("%s never selects a row", s)
			}
			t.selectRow = r
		} else {
			t.population = r
		}
	}
	if b := strings.ToUpper(strings.TrimSpace(y.insert["batchtype"])); b != "" && b != "LOGGED" && b != "UNLOGGED" && b != "COUNTER" {
		return nil, "insert.batchtype", fmt.Errorf("%q: want LOGGED, UNLOGGED or COUNTER", y.insert["batchtype"])
	}
	return t, "", nil
}

func (t *StressTable) ignore(f string) {
	if !slices.Contains(t.Ignored, f) {
		t.Ignored = append(t.Ignored, f)
	}
}

// maxStressValueLen is the longest value a column's generator makes.
func maxStressValueLen(c *stressCol) int {
	if usesSize(c.typ) {
		return int(min(max(c.size.maxValue(), 0), maxValueBytes))
	}
	switch c.typ.Kind {
	case cqltype.Boolean, cqltype.TinyInt:
		return 1
	case cqltype.SmallInt:
		return 2
	case cqltype.Int, cqltype.Date, cqltype.Inet, cqltype.Float:
		return 4
	case cqltype.Decimal:
		return 12
	case cqltype.UUID, cqltype.TimeUUID:
		return 16
	}
	return 8 // bigint, timestamp, time, double, varint
}

// usesSize reports whether a type's values (or elements) take their
// length, or a collection its element count, from the size distribution.
func usesSize(t *cqltype.Type) bool {
	switch t.Kind {
	case cqltype.Ascii, cqltype.Text, cqltype.Blob, cqltype.List, cqltype.Set, cqltype.Map:
		return true
	}
	return false
}

// stressTypeSupported says which CQL types the generators cover: the native
// types cassandra-stress generates (StressProfile.ColumnInfo.getGenerator),
// and non-frozen list, set and map of them.
func stressTypeSupported(t *cqltype.Type, role string) error {
	scalar := func(t *cqltype.Type) bool {
		switch t.Kind {
		case cqltype.Ascii, cqltype.Text, cqltype.Bigint, cqltype.Blob, cqltype.Boolean, cqltype.Decimal,
			cqltype.Double, cqltype.Float, cqltype.Inet, cqltype.Int, cqltype.Varint, cqltype.Timestamp,
			cqltype.UUID, cqltype.TimeUUID, cqltype.TinyInt, cqltype.SmallInt, cqltype.Time, cqltype.Date:
			return true
		}
		return false
	}
	switch {
	case scalar(t):
		return nil
	case t.Kind == cqltype.Counter:
		if role != "value" {
			return errors.New("a counter cannot be part of the primary key")
		}
		return nil
	case t.Kind.IsCollection() && !t.Frozen && role == "value":
		for _, e := range t.Params {
			if !scalar(e) {
				return fmt.Errorf("type %s: collections of %s are not supported", cqlName(t), cqlName(e))
			}
		}
		return nil
	}
	return fmt.Errorf("type %s is not supported (cassandra-stress generates the native types and collections of them)", cqlName(t))
}

// cqlName names a type for messages.
func cqlName(t *cqltype.Type) string {
	s := t.Kind.String()
	if len(t.Params) > 0 {
		var ps []string
		for _, p := range t.Params {
			ps = append(ps, cqlName(p))
		}
		s += "<" + strings.Join(ps, ", ") + ">"
	}
	if t.Frozen {
		s = "frozen<" + s + ">"
	}
	return s
}

// saltOf derives a column's salt from its name (stress salts each column's
// draws with a hash of its name, GeneratorConfig).
func saltOf(name string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 0x100000001b3
	}
	return splitmix64(h)
}
