package cqltype

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TableSchema is what a CREATE TABLE statement says about a table's layout.
// The parser ignores table options other than CLUSTERING ORDER, COMPACT
// STORAGE and gc_grace_seconds; a schema read from a node's system_schema
// (package nodeschema) fills in the rest (ID, Options, Indexes), which
// Describe prints.
type TableSchema struct {
	Keyspace, Table string
	// Columns in declaration order. Clustering columns declared DESC have a
	// Reversed type, as in the sstable's serialization header.
	Columns        []Column
	PartitionKey   []string // partition key column names, in key order
	Clustering     []ClusteringColumn
	CompactStorage bool
	// GCGraceSeconds is the table's gc_grace_seconds option when the
	// statement sets it (DESCRIBE always does); HasGCGrace says whether it
	// did.
	GCGraceSeconds int64
	HasGCGrace     bool
	// ViewOf is the base table ("keyspace.table") of a materialized view,
	// whose sstables live in a table directory of their own; "" for tables.
	ViewOf string
	// ViewWhere is a view's WHERE clause as CQL text, ViewAllColumns
	// whether it selects * (system_schema.views; the parser keeps neither).
	ViewWhere      string
	ViewAllColumns bool

	// ID is the table's id, a UUID in its text form, as system_schema
	// gives it (and the table's directory <table>-<id>, without dashes);
	// "" when the source does not say.
	ID string
	// Flags are system_schema.tables' flags (compound, dense, super,
	// counter), lower case; nil when the source does not say.
	Flags []string
	// Options are the table's WITH options other than CLUSTERING ORDER
	// and COMPACT STORAGE, in the order Describe prints them, each value
	// as CQL text ("0.01", "{'keys': 'ALL'}", "'99p'").
	Options []Option
	// Indexes are the table's secondary indexes.
	Indexes []Index
}

// Option is one table option: its name and its value as CQL text.
type Option struct{ Name, Value string }

// Option is the table option name's value as CQL text ("0.01",
// "{'keys': 'ALL'}"); ok is false when the table has no such option.
func (s *TableSchema) Option(name string) (value string, ok bool) {
	i := slices.IndexFunc(s.Options, func(o Option) bool { return o.Name == name })
	if i < 0 {
		return "", false
	}
	return s.Options[i].Value, true
}

// OptionMap is the table option name read as a map of strings, as
// compression, compaction and caching are written ({'class': '...',
// 'chunk_length_in_kb': '16'}); ok is false when the table has no such
// option (a schema parsed from CQL keeps none: see TableSchema).
func (s *TableSchema) OptionMap(name string) (m map[string]string, ok bool, err error) {
	v, ok := s.Option(name)
	if !ok {
		return nil, false, nil
	}
	lx := newLexer(v)
	if !lx.accept("{") {
		return nil, true, fmt.Errorf("option %s: %w", name, lx.errorf(lx.peek(), "expected a map {'key': 'value', ...}"))
	}
	m = map[string]string{}
	for !lx.accept("}") {
		if len(m) > 0 && !lx.accept(",") {
			return nil, true, fmt.Errorf("option %s: %w", name, lx.errorf(lx.peek(), "expected , or }"))
		}
		k, v := lx.next(), token{}
		if k.kind == tokString && lx.accept(":") {
			v = lx.next()
		}
		if k.kind != tokString || v.kind != tokString {
			return nil, true, fmt.Errorf("option %s: %w", name, lx.errorf(k, "expected 'key': 'value'"))
		}
		m[k.text] = v.text
	}
	if t := lx.peek(); t.kind != tokEOF {
		return nil, true, fmt.Errorf("option %s: %w", name, lx.errorf(t, "expected the end of the map, found %q", t.text))
	}
	return m, true, nil
}

// Index is a secondary index as system_schema.indexes holds it: its
// kind (KEYS, COMPOSITES or CUSTOM) and options, among them "target" (the
// indexed column, or keys(c), values(c), entries(c), full(c)) and, for a
// custom index, "class_name".
type Index struct {
	Name    string
	Kind    string
	Options map[string]string
}

// Column is one column of a table.
type Column struct {
	Name   string
	Type   *Type
	Static bool
	// Dropped is a column an ALTER TABLE ... DROP removed (DESCRIBE ...
	// WITH INTERNALS prints them): sstables written before the drop may
	// still hold it.
	Dropped bool
	// DroppedTime is when the column was last dropped, in microseconds
	// (system_schema.dropped_columns' dropped_time, or DROP ... USING
	// TIMESTAMP): cells written at or before it are not read
	// (DeserializationHelper.isDropped), even after the column was added
	// again. 0 when it never was (or the source does not say).
	DroppedTime int64
	// Mask is the column's dynamic data mask (Cassandra 5.0), as CQL:
	// "system.mask_default()"; "" for none.
	Mask string
}

// ClusteringColumn is a clustering column and its order.
type ClusteringColumn struct {
	Name       string
	Descending bool
}

// Column returns the column called name, or nil.
func (s *TableSchema) Column(name string) *Column {
	for i := range s.Columns {
		if s.Columns[i].Name == name {
			return &s.Columns[i]
		}
	}
	return nil
}

// Schema holds the user types and tables of a CQL script.
type Schema struct {
	Types  map[string]*Type // "keyspace.name" (or "name" without a keyspace) -> the UDT as defined (not frozen)
	Tables []*TableSchema
	// Unresolved are the materialized views ("keyspace.view") whose base
	// table the script does not define, with why: a script of a view alone
	// is not an error until that view is the one asked for.
	Unresolved map[string]error
}

// ParseCreateTable parses one CREATE TABLE statement, for example as
// DESCRIBE TABLE prints it. User-defined column types keep only their name;
// use ParseSchema with the CREATE TYPE statements to resolve them.
func ParseCreateTable(src string) (*TableSchema, error) {
	lx := newLexer(src)
	if !lx.acceptWord("create") || !(lx.acceptWord("table") || lx.acceptWord("columnfamily")) {
		return nil, lx.errorf(lx.peek(), "expected CREATE TABLE")
	}
	ts, err := parseTableBody(lx, "", nil)
	if err != nil {
		return nil, err
	}
	lx.accept(";")
	if t := lx.peek(); t.kind != tokEOF {
		return nil, lx.errorf(t, "expected the end of the statement, found %q", t.text)
	}
	return ts, nil
}

// ParseSchema parses a CQL script such as cqlsh's DESCRIBE KEYSPACE or
// DESCRIBE SCHEMA output: CREATE TYPE, CREATE TABLE and CREATE MATERIALIZED
// VIEW statements are read (user types resolved in the order they are
// defined; USE sets the default keyspace), ALTER TABLE ... ADD/DROP is
// applied, CREATE [CUSTOM] INDEX adds the index to its table's Indexes
// (as system_schema.indexes would hold it), and every other statement
// (keyspaces, functions and aggregates, whose bodies may hold semicolons
// in strings or $$ blocks, inserts) is skipped whole.
func ParseSchema(src string) (*Schema, error) {
	lx := newLexer(src)
	sc := &Schema{Types: map[string]*Type{}, Unresolved: map[string]error{}}
	keyspace := ""
	for lx.peek().kind != tokEOF {
		if lx.err != nil {
			return nil, lx.err
		}
		switch {
		case lx.acceptWord("use"):
			t := lx.next()
			keyspace = identName(t)
			lx.accept(";")
		case lx.acceptWord("create"):
			switch {
			case lx.acceptWord("table"), lx.acceptWord("columnfamily"):
				ts, err := parseTableBody(lx, keyspace, sc)
				if err != nil {
					return nil, err
				}
				sc.Tables = append(sc.Tables, ts)
				skipStatement(lx)
			case lx.acceptWord("type"):
				if err := parseCreateType(lx, keyspace, sc); err != nil {
					return nil, err
				}
				skipStatement(lx)
			case lx.acceptWord("index"):
				if err := parseCreateIndex(lx, keyspace, false, sc); err != nil {
					return nil, err
				}
				skipStatement(lx)
			case lx.acceptWord("custom"):
				if !lx.acceptWord("index") {
					return nil, lx.errorf(lx.peek(), "expected INDEX after CREATE CUSTOM")
				}
				if err := parseCreateIndex(lx, keyspace, true, sc); err != nil {
					return nil, err
				}
				skipStatement(lx)
			case lx.acceptWord("materialized"):
				if !lx.acceptWord("view") {
					return nil, lx.errorf(lx.peek(), "expected VIEW after CREATE MATERIALIZED")
				}
				ts, err := parseCreateView(lx, keyspace, sc)
				var missing *missingTableError
				switch {
				case errors.As(err, &missing):
					sc.Unresolved[missing.view] = err
				case err != nil:
					return nil, err
				default:
					sc.Tables = append(sc.Tables, ts)
				}
				skipStatement(lx)
			default:
				skipStatement(lx)
			}
		case lx.acceptWord("alter"):
			if lx.acceptWord("table") || lx.acceptWord("columnfamily") {
				if err := parseAlterTable(lx, keyspace, sc); err != nil {
					return nil, err
				}
			}
			skipStatement(lx)
		default:
			skipStatement(lx)
		}
	}
	if lx.err != nil {
		return nil, lx.err
	}
	return sc, nil
}

// Table returns the table called name (unqualified), or nil.
func (s *Schema) Table(name string) *TableSchema {
	for _, t := range s.Tables {
		if t.Table == name {
			return t
		}
	}
	return nil
}

// Lookup returns the tables (and views) called name, in keyspace when it
// is not "". Names are matched as Cassandra stores them: exactly.
func (s *Schema) Lookup(keyspace, name string) []*TableSchema {
	var out []*TableSchema
	for _, t := range s.Tables {
		if t.Table == name && (keyspace == "" || t.Keyspace == keyspace) {
			out = append(out, t)
		}
	}
	return out
}

// Name is "keyspace.table", or "table" without a keyspace.
func (t *TableSchema) Name() string { return qualify(t.Keyspace, t.Table) }

// lookupOne finds the table ks.name a later statement refers to.
func (s *Schema) lookupOne(lx *lexer, at token, ks, name string) (*TableSchema, error) {
	m := s.Lookup(ks, name)
	if len(m) == 0 && ks != "" {
		m = s.Lookup("", name)
	}
	if len(m) != 1 {
		return nil, lx.errorf(at, "table %s is not defined before it is used", qualify(ks, name))
	}
	return m[0], nil
}

// parseCreateView reads "name AS SELECT cols FROM base WHERE ... PRIMARY
// KEY (...) [WITH ...]", as DESCRIBE prints a materialized view: its
// columns take their types from the base table, defined earlier.
func parseCreateView(lx *lexer, keyspace string, sc *Schema) (*TableSchema, error) {
	ks, name, err := qualifiedName(lx, keyspace)
	if err != nil {
		return nil, err
	}
	if !lx.acceptWord("as") || !lx.acceptWord("select") {
		return nil, lx.errorf(lx.peek(), "expected AS SELECT in materialized view %s", name)
	}
	var selected []string
	all := lx.accept("*")
	for !all {
		t := lx.next()
		if t.kind != tokIdent && t.kind != tokQuotedIdent {
			return nil, lx.errorf(t, "expected a column name in view %s, found %q", name, t.text)
		}
		selected = append(selected, identName(t))
		if !lx.accept(",") {
			break
		}
	}
	at := lx.peek()
	if !lx.acceptWord("from") {
		return nil, lx.errorf(at, "expected FROM in materialized view %s", name)
	}
	at = lx.peek()
	bks, bname, err := qualifiedName(lx, ks)
	if err != nil {
		return nil, err
	}
	base, err := sc.lookupOne(lx, at, bks, bname)
	if err != nil {
		return nil, &missingTableError{view: qualify(ks, name), err: err}
	}
	ts := &TableSchema{Keyspace: ks, Table: name, ViewOf: base.Name()}
	// The WHERE clause (restrictions, strings, operators) up to PRIMARY KEY.
	for {
		t := lx.peek()
		if t.kind == tokEOF || t.kind == tokPunct && t.text == ";" {
			return nil, lx.errorf(t, "expected PRIMARY KEY in materialized view %s", name)
		}
		if lx.acceptWord("primary") {
			if !lx.acceptWord("key") {
				return nil, lx.errorf(lx.peek(), "expected KEY after PRIMARY")
			}
			break
		}
		lx.next()
	}
	if err := parsePrimaryKey(lx, ts); err != nil {
		return nil, err
	}
	keyCols := append(append([]string{}, ts.PartitionKey...), clusteringNames(ts)...)
	for _, c := range base.Columns {
		if c.Dropped || !all && !slices.Contains(selected, c.Name) && !slices.Contains(keyCols, c.Name) {
			continue
		}
		// Reversed comes from the view's own clustering order below.
		typ := *c.Type
		typ.Reversed = false
		ts.Columns = append(ts.Columns, Column{Name: c.Name, Type: &typ})
	}
	if lx.acceptWord("with") {
		if err := parseTableOptions(lx, ts); err != nil {
			return nil, err
		}
	}
	if err := ts.finish(lx, name); err != nil {
		return nil, err
	}
	return ts, nil
}

// missingTableError is a view whose base table is not defined.
type missingTableError struct {
	view string
	err  error
}

func (e *missingTableError) Error() string {
	return "materialized view " + e.view + ": " + e.err.Error()
}

func (e *missingTableError) Unwrap() error { return e.err }

func clusteringNames(ts *TableSchema) []string {
	out := make([]string, len(ts.Clustering))
	for i, c := range ts.Clustering {
		out[i] = c.Name
	}
	return out
}

// parseAlterTable applies "name ADD col type [static]", "name ADD (col
// type, ...)", "name DROP col [USING TIMESTAMP n]" and "name DROP (a, b)"
// to a table defined earlier; other alterations (options, renames of key
// columns) change nothing the sstables store and are skipped.
func parseAlterTable(lx *lexer, keyspace string, sc *Schema) error {
	if lx.acceptWord("if") && !lx.acceptWord("exists") {
		return lx.errorf(lx.peek(), "expected IF EXISTS")
	}
	at := lx.peek()
	ks, name, err := qualifiedName(lx, keyspace)
	if err != nil {
		return err
	}
	// An alteration of a table the script does not define changes nothing
	// it describes.
	ts, err := sc.lookupOne(lx, at, ks, name)
	if err != nil {
		return nil
	}
	switch {
	case lx.acceptWord("add"):
		if lx.acceptWord("if") && !(lx.acceptWord("not") && lx.acceptWord("exists")) {
			return lx.errorf(lx.peek(), "expected IF NOT EXISTS")
		}
		paren := lx.accept("(")
		for {
			colTok := lx.next()
			if colTok.kind != tokIdent && colTok.kind != tokQuotedIdent {
				return lx.errorf(colTok, "expected a column name after ADD, found %q", colTok.text)
			}
			typ, err := parseCQLType(lx, 0)
			if err != nil {
				return err
			}
			if typ, err = sc.resolve(lx, colTok, typ, ts.Keyspace); err != nil {
				return err
			}
			typ.setClass(false)
			col := Column{Name: identName(colTok), Type: typ, Static: lx.acceptWord("static")}
			if c := ts.Column(col.Name); c != nil {
				col.DroppedTime = c.DroppedTime // re-added after a drop: older cells stay dropped
				*c = col
			} else {
				ts.Columns = append(ts.Columns, col)
			}
			if !paren || !lx.accept(",") {
				break
			}
		}
	case lx.acceptWord("drop"):
		if lx.acceptWord("if") && !lx.acceptWord("exists") {
			return lx.errorf(lx.peek(), "expected IF EXISTS")
		}
		paren := lx.accept("(")
		var dropped []*Column
		for {
			t := lx.next()
			if t.kind != tokIdent && t.kind != tokQuotedIdent {
				return lx.errorf(t, "expected a column name after DROP, found %q", t.text)
			}
			if c := ts.Column(identName(t)); c != nil {
				c.Dropped = true
				dropped = append(dropped, c)
			}
			if !paren || !lx.accept(",") {
				break
			}
		}
		if paren {
			lx.accept(")")
		}
		// DESCRIBE ... WITH INTERNALS says when: DROP c USING TIMESTAMP n.
		if lx.acceptWord("using") {
			if !lx.acceptWord("timestamp") {
				return lx.errorf(lx.peek(), "expected TIMESTAMP after USING")
			}
			t := lx.next()
			n, err := strconv.ParseInt(t.text, 10, 64)
			if t.kind != tokNumber || err != nil {
				return lx.errorf(t, "expected a timestamp in microseconds, found %q", t.text)
			}
			for _, c := range dropped {
				c.DroppedTime = n
			}
		}
	}
	return nil
}

// legacyIndexClass is the USING name of Cassandra's own secondary index
// (CassandraIndex.NAME): CREATE INDEX ... USING it is a regular index.
const legacyIndexClass = "legacy_local_table"

// parseCreateIndex reads what follows CREATE [CUSTOM] INDEX, as DESCRIBE
// prints it (IndexMetadata.appendCqlTo) and Cassandra's grammar takes it
// (Parser.g's createIndexStatement): [IF NOT EXISTS] [[keyspace.]name] ON
// [keyspace.]table (target, ...) [USING 'class'] [WITH OPTIONS = {...}].
// The index joins its table's Indexes as CreateIndexStatement records it:
// kind CUSTOM with the class as given (class_name) and the options, or
// COMPOSITES (no USING, or USING 'legacy_local_table'); the target option
// is the targets as IndexTarget.asCqlString writes them, a bare collection
// column as values(c). An index of a table the script does not define
// changes nothing it describes and is skipped.
func parseCreateIndex(lx *lexer, keyspace string, custom bool, sc *Schema) error {
	if lx.acceptWord("if") && !(lx.acceptWord("not") && lx.acceptWord("exists")) {
		return lx.errorf(lx.peek(), "expected IF NOT EXISTS")
	}
	name, nameKs := "", ""
	if t := lx.peek(); !(t.kind == tokIdent && strings.EqualFold(t.text, "on")) {
		var err error
		if nameKs, name, err = qualifiedName(lx, ""); err != nil {
			return err
		}
	}
	if !lx.acceptWord("on") {
		return lx.errorf(lx.peek(), "expected ON after CREATE INDEX %s", name)
	}
	at := lx.peek()
	ks, table, err := qualifiedName(lx, nameKs)
	if err != nil {
		return err
	}
	if ks == "" {
		ks = keyspace
	}
	if !lx.accept("(") {
		return lx.errorf(lx.peek(), "expected '(' after CREATE INDEX ... ON %s", qualify(ks, table))
	}
	type target struct{ fn, column string }
	var targets []target
	for !lx.accept(")") {
		t := lx.next()
		if t.kind != tokIdent && t.kind != tokQuotedIdent {
			return lx.errorf(t, "expected a column to index, found %q", t.text)
		}
		tg := target{column: identName(t)}
		if fn := strings.ToLower(t.text); t.kind == tokIdent && lx.accept("(") {
			switch fn {
			case "keys", "values", "entries", "full":
			default:
				return lx.errorf(t, "expected KEYS, VALUES, ENTRIES or FULL before '(', found %q", t.text)
			}
			c := lx.next()
			if c.kind != tokIdent && c.kind != tokQuotedIdent {
				return lx.errorf(c, "expected a column in %s(...), found %q", fn, c.text)
			}
			if !lx.accept(")") {
				return lx.errorf(lx.peek(), "expected ')' after %s(%s", fn, c.text)
			}
			tg = target{fn: fn, column: identName(c)}
		}
		targets = append(targets, tg)
		if !lx.accept(",") {
			if !lx.accept(")") {
				return lx.errorf(lx.peek(), "expected ',' or ')' in the index's targets, found %q", lx.peek().text)
			}
			break
		}
	}
	class, hasClass := "", false
	if lx.acceptWord("using") {
		t := lx.next()
		if t.kind != tokString || t.text == "" {
			return lx.errorf(t, "expected the index class as a string after USING, found %q", t.text)
		}
		class, hasClass = t.text, true
	}
	opts := map[string]string{}
	if lx.acceptWord("with") {
		if !lx.acceptWord("options") || !lx.accept("=") || !lx.accept("{") {
			return lx.errorf(lx.peek(), "expected OPTIONS = {...} after WITH")
		}
		for !lx.accept("}") {
			k, colon, v := lx.next(), lx.accept(":"), lx.next()
			if k.kind != tokString || !colon || v.kind != tokString {
				return lx.errorf(k, "expected 'option': 'value' in the index's OPTIONS")
			}
			opts[k.text] = v.text
			if !lx.accept(",") {
				if !lx.accept("}") {
					return lx.errorf(lx.peek(), "expected ',' or '}' in the index's OPTIONS, found %q", lx.peek().text)
				}
				break
			}
		}
	}
	ts, err := sc.lookupOne(lx, at, ks, table)
	if err != nil {
		return nil // an index of a table the script does not define
	}
	if hasClass && !custom && !strings.EqualFold(class, legacyIndexClass) {
		custom = true
	}
	if custom && !hasClass {
		return lx.errorf(at, "CREATE CUSTOM INDEX on %s without USING 'class'", ts.Name())
	}
	if !custom && len(targets) != 1 {
		return lx.errorf(at, "CREATE INDEX on %s: only a CUSTOM index takes %d columns", ts.Name(), len(targets))
	}
	var cql []string
	for _, tg := range targets {
		col := ts.Column(tg.column)
		if col == nil {
			return lx.errorf(at, "CREATE INDEX on %s: no column %s", ts.Name(), tg.column)
		}
		fn := tg.fn
		if fn == "" && (col.Type.Kind == List || col.Type.Kind == Set || col.Type.Kind == Map) {
			fn = "values"
		}
		if fn == "" {
			cql = append(cql, maybeQuote(col.Name))
		} else {
			cql = append(cql, fn+"("+maybeQuote(col.Name)+")")
		}
	}
	ix := Index{Name: name, Kind: "COMPOSITES", Options: map[string]string{"target": strings.Join(cql, ", ")}}
	if custom {
		ix.Kind = "CUSTOM"
		for k, v := range opts {
			ix.Options[k] = v
		}
		ix.Options["class_name"] = class
	}
	// CreateIndexStatement.apply refuses (or, IF NOT EXISTS, skips) an
	// index whose name the keyspace has, or that equals one of the table's
	// in all but its name: the first one stays.
	if name != "" && sc.hasIndex(ts.Keyspace, name) || slices.ContainsFunc(ts.Indexes, func(o Index) bool {
		return o.Kind == ix.Kind && maps.Equal(o.Options, ix.Options)
	}) {
		return nil
	}
	if ix.Name == "" {
		// IndexMetadata.generateDefaultIndexName: <table>_<column>_idx, or
		// <table>_idx, without its non-word characters; then
		// KeyspaceMetadata.findAvailableIndexName: _1, _2... after it while
		// the keyspace has the name.
		base := ts.Table + "_idx"
		if len(targets) == 1 {
			base = ts.Table + "_" + targets[0].column + "_idx"
		}
		base = nonWord.ReplaceAllString(base, "")
		ix.Name = base
		for i := 1; sc.hasIndex(ts.Keyspace, ix.Name); i++ {
			ix.Name = base + "_" + strconv.Itoa(i)
		}
	}
	ts.Indexes = append(ts.Indexes, ix)
	return nil
}

// hasIndex says whether a table of keyspace ks has an index called name
// (KeyspaceMetadata.hasIndex: index names are the keyspace's).
func (s *Schema) hasIndex(ks, name string) bool {
	for _, t := range s.Tables {
		if t.Keyspace == ks && slices.ContainsFunc(t.Indexes, func(o Index) bool { return o.Name == name }) {
			return true
		}
	}
	return false
}

// nonWord matches what an index name may not hold
// (IndexMetadata.PATTERN_NON_WORD_CHAR).
var nonWord = regexp.MustCompile(`\W`)

// Index implementations, as Implementation names them.
const (
	IndexSAI     = "SAI"  // org.apache.cassandra.index.sai.StorageAttachedIndex (Cassandra 5.0)
	IndexSASI    = "SASI" // org.apache.cassandra.index.sasi.SASIIndex (3.4 to 4.1; 5.0 disabled by default)
	IndexRegular = "2i"   // Cassandra's own, a table in .<index>/ (CassandraIndex)
)

// Implementation says which implementation the index is, as Cassandra
// resolves its class (IndexMetadata.getIndexClassName, its aliases
// "sai" and "storageattachedindex"): IndexSAI, IndexSASI, IndexRegular
// for a KEYS or COMPOSITES index, or the class name of any other custom
// index.
func (ix Index) Implementation() string {
	if ix.Kind != "CUSTOM" {
		return IndexRegular
	}
	class := ix.Options["class_name"]
	simple := class[strings.LastIndexByte(class, '.')+1:]
	switch {
	case strings.EqualFold(class, "sai"), strings.EqualFold(simple, "StorageAttachedIndex"):
		return IndexSAI
	case strings.EqualFold(simple, "SASIIndex"):
		return IndexSASI
	}
	return class
}

// Target is what the index is on, as its target option says ("val",
// "keys(m)").
func (ix Index) Target() string { return ix.Options["target"] }

// skipStatement consumes tokens through the next ';' outside brackets.
func skipStatement(lx *lexer) {
	depth := 0
	for {
		t := lx.next()
		switch {
		case t.kind == tokEOF:
			return
		case t.kind == tokPunct && (t.text == "(" || t.text == "{" || t.text == "["):
			depth++
		case t.kind == tokPunct && (t.text == ")" || t.text == "}" || t.text == "]"):
			depth--
		case t.kind == tokPunct && t.text == ";" && depth <= 0:
			return
		}
	}
}

// qualifiedName reads [IF NOT EXISTS] name or keyspace.name.
func qualifiedName(lx *lexer, defaultKeyspace string) (ks, name string, err error) {
	if lx.acceptWord("if") {
		if !lx.acceptWord("not") || !lx.acceptWord("exists") {
			return "", "", lx.errorf(lx.peek(), "expected IF NOT EXISTS")
		}
	}
	t := lx.next()
	if t.kind != tokIdent && t.kind != tokQuotedIdent {
		return "", "", lx.errorf(t, "expected a name, found %q", t.text)
	}
	name = identName(t)
	ks = defaultKeyspace
	if lx.accept(".") {
		n := lx.next()
		if n.kind != tokIdent && n.kind != tokQuotedIdent {
			return "", "", lx.errorf(n, "expected a name after %q.", name)
		}
		ks, name = name, identName(n)
	}
	return ks, name, nil
}

func parseCreateType(lx *lexer, keyspace string, sc *Schema) error {
	ks, name, err := qualifiedName(lx, keyspace)
	if err != nil {
		return err
	}
	if !lx.accept("(") {
		return lx.errorf(lx.peek(), "expected '(' after CREATE TYPE %s", name)
	}
	ut := &Type{Kind: UDT, impl: "UserType", Keyspace: ks, Name: name}
	for !lx.accept(")") {
		ft := lx.next()
		if ft.kind != tokIdent && ft.kind != tokQuotedIdent {
			return lx.errorf(ft, "expected a field name in type %s, found %q", name, ft.text)
		}
		typ, err := parseCQLType(lx, 0)
		if err != nil {
			return err
		}
		if typ, err = sc.resolve(lx, ft, typ, ks); err != nil {
			return err
		}
		ut.FieldNames = append(ut.FieldNames, identName(ft))
		ut.Params = append(ut.Params, typ)
		if !lx.accept(",") {
			if !lx.accept(")") {
				return lx.errorf(lx.peek(), "expected ',' or ')' in type %s, found %q", name, lx.peek().text)
			}
			break
		}
	}
	ut.setClass(false)
	sc.Types[qualify(ks, name)] = ut
	return nil
}

func qualify(ks, name string) string {
	if ks == "" {
		return name
	}
	return ks + "." + name
}

// resolve replaces user type references inside t with their definitions,
// keeping each reference's frozen/multi-cell state.
func (sc *Schema) resolve(lx *lexer, at token, t *Type, keyspace string) (*Type, error) {
	if sc == nil {
		return t, nil
	}
	if t.Kind == UDT && len(t.FieldNames) == 0 {
		ks := t.Keyspace
		if ks == "" {
			ks = keyspace
		}
		def, ok := sc.Types[qualify(ks, t.Name)]
		if !ok {
			def, ok = sc.Types[t.Name]
		}
		if !ok {
			return nil, lx.errorf(at, "unknown user type %q", qualify(ks, t.Name))
		}
		c := *def
		if t.Frozen {
			c = *freeze(def)
		}
		c.Reversed = t.Reversed
		return &c, nil
	}
	if len(t.Params) == 0 {
		return t, nil
	}
	c := *t
	c.Params = make([]*Type, len(t.Params))
	for i, p := range t.Params {
		r, err := sc.resolve(lx, at, p, keyspace)
		if err != nil {
			return nil, err
		}
		c.Params[i] = r
	}
	return &c, nil
}

// parseTableBody reads "name ( columns, PRIMARY KEY (...) ) [WITH ...]".
func parseTableBody(lx *lexer, keyspace string, sc *Schema) (*TableSchema, error) {
	ks, name, err := qualifiedName(lx, keyspace)
	if err != nil {
		return nil, err
	}
	ts := &TableSchema{Keyspace: ks, Table: name}
	if !lx.accept("(") {
		return nil, lx.errorf(lx.peek(), "expected '(' after CREATE TABLE %s", name)
	}
	for {
		if lx.accept(")") {
			break
		}
		if lx.acceptWord("primary") {
			if !lx.acceptWord("key") {
				return nil, lx.errorf(lx.peek(), "expected KEY after PRIMARY")
			}
			if err := parsePrimaryKey(lx, ts); err != nil {
				return nil, err
			}
		} else {
			colTok := lx.next()
			if colTok.kind != tokIdent && colTok.kind != tokQuotedIdent {
				return nil, lx.errorf(colTok, "expected a column name, found %q", colTok.text)
			}
			typ, err := parseCQLType(lx, 0)
			if err != nil {
				return nil, err
			}
			if typ, err = sc.resolve(lx, colTok, typ, ks); err != nil {
				return nil, err
			}
			col := Column{Name: identName(colTok), Type: typ}
			// Column modifiers up to the next ',' or ')': STATIC,
			// PRIMARY KEY, and anything else (e.g. MASKED WITH ...) skipped.
			depth := 0
			for {
				t := lx.peek()
				if t.kind == tokEOF {
					return nil, lx.errorf(t, "expected ')' to close the column list")
				}
				if depth == 0 && t.kind == tokPunct && (t.text == "," || t.text == ")") {
					break
				}
				lx.next()
				switch {
				case t.kind == tokIdent && strings.EqualFold(t.text, "static") && depth == 0:
					col.Static = true
				case t.kind == tokIdent && strings.EqualFold(t.text, "primary") && depth == 0:
					if !lx.acceptWord("key") {
						return nil, lx.errorf(lx.peek(), "expected KEY after PRIMARY")
					}
					ts.PartitionKey = []string{col.Name}
				case t.kind == tokPunct && (t.text == "(" || t.text == "["):
					depth++
				case t.kind == tokPunct && (t.text == ")" || t.text == "]"):
					depth--
				}
			}
			ts.Columns = append(ts.Columns, col)
		}
		if !lx.accept(",") {
			if !lx.accept(")") {
				return nil, lx.errorf(lx.peek(), "expected ',' or ')' in the column list, found %q", lx.peek().text)
			}
			break
		}
	}
	if len(ts.PartitionKey) == 0 {
		return nil, lx.errorf(lx.peek(), "expected a PRIMARY KEY in table %s", name)
	}
	if lx.acceptWord("with") {
		if err := parseTableOptions(lx, ts); err != nil {
			return nil, err
		}
	}
	if err := ts.finish(lx, name); err != nil {
		return nil, err
	}
	return ts, nil
}

// finish checks that the key columns are declared, reverses the types of
// descending clustering columns and fills in the type classes.
func (ts *TableSchema) finish(lx *lexer, name string) error {
	if err := ts.complete(name); err != nil {
		return lx.errorf(lx.peek(), "%v", err)
	}
	return nil
}

// complete is finish without a statement to point into.
func (ts *TableSchema) complete(name string) error {
	if len(ts.PartitionKey) == 0 {
		return fmt.Errorf("table %s has no partition key column", name)
	}
	for _, k := range ts.PartitionKey {
		if ts.Column(k) == nil {
			return fmt.Errorf("partition key column %q of %s is not declared", k, name)
		}
	}
	for _, c := range ts.Clustering {
		col := ts.Column(c.Name)
		if col == nil {
			return fmt.Errorf("clustering column %q of %s is not declared", c.Name, name)
		}
		if c.Descending {
			r := *col.Type
			r.Reversed = true
			col.Type = &r
		}
	}
	for i := range ts.Columns {
		ts.Columns[i].Type.setClass(false)
	}
	return nil
}

// parsePrimaryKey reads "((a, b), c, d)" or "(a, c)".
func parsePrimaryKey(lx *lexer, ts *TableSchema) error {
	if !lx.accept("(") {
		return lx.errorf(lx.peek(), "expected '(' after PRIMARY KEY")
	}
	name := func() (string, error) {
		t := lx.next()
		if t.kind != tokIdent && t.kind != tokQuotedIdent {
			return "", lx.errorf(t, "expected a column name in PRIMARY KEY, found %q", t.text)
		}
		return identName(t), nil
	}
	if lx.accept("(") {
		for {
			n, err := name()
			if err != nil {
				return err
			}
			ts.PartitionKey = append(ts.PartitionKey, n)
			if lx.accept(")") {
				break
			}
			if !lx.accept(",") {
				return lx.errorf(lx.peek(), "expected ',' or ')' in the partition key")
			}
		}
	} else {
		n, err := name()
		if err != nil {
			return err
		}
		ts.PartitionKey = []string{n}
	}
	for !lx.accept(")") {
		if !lx.accept(",") {
			return lx.errorf(lx.peek(), "expected ',' or ')' in PRIMARY KEY, found %q", lx.peek().text)
		}
		n, err := name()
		if err != nil {
			return err
		}
		ts.Clustering = append(ts.Clustering, ClusteringColumn{Name: n})
	}
	return nil
}

// uuidText is a UUID in its text form.
var uuidText = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// parseTableOptions reads WITH options, keeping CLUSTERING ORDER BY,
// COMPACT STORAGE, gc_grace_seconds and ID, up to the end of the
// statement (not consuming ';').
func parseTableOptions(lx *lexer, ts *TableSchema) error {
	for {
		switch {
		case lx.acceptWord("clustering"):
			if !lx.acceptWord("order") || !lx.acceptWord("by") || !lx.accept("(") {
				return lx.errorf(lx.peek(), "expected CLUSTERING ORDER BY (")
			}
			for !lx.accept(")") {
				lx.accept(",")
				t := lx.next()
				if t.kind != tokIdent && t.kind != tokQuotedIdent {
					return lx.errorf(t, "expected a clustering column, found %q", t.text)
				}
				desc := false
				if lx.acceptWord("desc") {
					desc = true
				} else {
					lx.acceptWord("asc")
				}
				found := false
				for i := range ts.Clustering {
					if ts.Clustering[i].Name == identName(t) {
						ts.Clustering[i].Descending = desc
						found = true
					}
				}
				if !found {
					return lx.errorf(t, "%q in CLUSTERING ORDER is not a clustering column", identName(t))
				}
			}
		case lx.acceptWord("compact"):
			if !lx.acceptWord("storage") {
				return lx.errorf(lx.peek(), "expected STORAGE after COMPACT")
			}
			ts.CompactStorage = true
		case lx.acceptWord("id"):
			// WITH ID = <uuid>, as DESCRIBE ... WITH INTERNALS prints it.
			if !lx.accept("=") {
				return lx.errorf(lx.peek(), "expected = after ID")
			}
			start := lx.peek()
			for {
				t := lx.peek()
				if t.kind == tokEOF || t.kind == tokPunct && t.text == ";" || t.kind == tokIdent && strings.EqualFold(t.text, "and") && t.pos > start.pos {
					break
				}
				lx.next()
			}
			end := len(lx.src)
			if t := lx.peek(); t.kind != tokEOF {
				end = t.pos
			}
			id := strings.TrimSpace(lx.src[start.pos:end])
			if !uuidText.MatchString(id) {
				return lx.errorf(start, "expected a table id (a UUID) after ID =, found %q", id)
			}
			ts.ID = strings.ToLower(id)
		case lx.acceptWord("gc_grace_seconds"):
			if !lx.accept("=") {
				return lx.errorf(lx.peek(), "expected = after gc_grace_seconds")
			}
			t := lx.next()
			n, err := strconv.ParseInt(t.text, 10, 32)
			if t.kind != tokNumber || err != nil || n < 0 {
				return lx.errorf(t, "expected gc_grace_seconds to be a non-negative int, found %q", t.text)
			}
			ts.GCGraceSeconds, ts.HasGCGrace = n, true
		default:
			// name = value: skip the value, brackets included.
			depth := 0
			for {
				t := lx.peek()
				if t.kind == tokEOF || depth == 0 && t.kind == tokPunct && t.text == ";" {
					return nil
				}
				if depth == 0 && t.kind == tokIdent && strings.EqualFold(t.text, "and") {
					break
				}
				lx.next()
				if t.kind == tokPunct {
					switch t.text {
					case "{", "(", "[":
						depth++
					case "}", ")", "]":
						depth--
					}
				}
			}
		}
		if !lx.acceptWord("and") {
			t := lx.peek()
			if t.kind == tokEOF || t.kind == tokPunct && t.text == ";" {
				return nil
			}
			return lx.errorf(t, "expected AND or the end of the statement, found %q", t.text)
		}
	}
}
