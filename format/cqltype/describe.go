package cqltype

import (
	"slices"
	"strconv"
	"strings"
)

// Describe prints the table as Cassandra 4.0 and later print it for
// DESCRIBE TABLE (TableMetadata.appendCqlTo, ViewMetadata.appendCqlTo,
// IndexMetadata.appendCqlTo): the CREATE TABLE (or CREATE MATERIALIZED
// VIEW) statement with its columns in create order, the PRIMARY KEY
// (inline for a one-column key), CLUSTERING ORDER BY and Options, then a
// CREATE INDEX statement for each index. With internals it adds what
// DESCRIBE ... WITH INTERNALS adds: the table's ID, and its dropped
// columns, declared in the column list and dropped after it with their
// drop times (and added again where they were).
func (t *TableSchema) Describe(internals bool) string {
	var b strings.Builder
	if t.ViewOf != "" {
		t.describeView(&b, internals)
	} else {
		t.describeTable(&b, internals)
	}
	b.WriteByte('\n')
	idx := slices.Clone(t.Indexes)
	slices.SortFunc(idx, func(a, b Index) int { return strings.Compare(a.Name, b.Name) })
	for _, ix := range idx {
		b.WriteByte('\n')
		t.describeIndex(&b, ix)
		b.WriteByte('\n')
	}
	return b.String()
}

// cqlName is a table's name as CQL: keyspace.table, each quoted if need
// be (TableMetadata.toString).
func (t *TableSchema) cqlName() string {
	if t.Keyspace == "" {
		return maybeQuote(t.Table)
	}
	return maybeQuote(t.Keyspace) + "." + maybeQuote(t.Table)
}

func (t *TableSchema) describeTable(b *strings.Builder, internals bool) {
	b.WriteString("CREATE TABLE " + t.cqlName() + " (\n")
	single := len(t.PartitionKey) == 1 && len(t.Clustering) == 0
	var cols []*Column // in create order, as Columns holds them
	var dropped []*Column
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.DroppedTime > 0 || c.Dropped {
			dropped = append(dropped, c)
		}
		if c.Dropped || internals && c.DroppedTime > 0 {
			continue // a dropped column (re-added ones come back after the DROP)
		}
		cols = append(cols, c)
	}
	if !internals {
		dropped = nil
	}
	// In the order the node holds them (dropped_columns' rows, by name).
	slices.SortStableFunc(dropped, func(a, b *Column) int { return strings.Compare(a.Name, b.Name) })
	for i, c := range cols {
		b.WriteString("    ")
		c.appendCQL(b)
		if single && c.Name == t.PartitionKey[0] {
			b.WriteString(" PRIMARY KEY")
		}
		if !single || len(dropped) > 0 || i < len(cols)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	for i, c := range dropped {
		b.WriteString("    ")
		c.appendCQL(b)
		if !single || i < len(dropped)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	if !single {
		b.WriteString("    ")
		t.appendPrimaryKey(b)
		b.WriteByte('\n')
	}
	b.WriteByte(')')
	t.appendOptions(b, " WITH ", internals)
	for _, c := range dropped {
		b.WriteString("\nALTER TABLE " + t.cqlName() + " DROP " + maybeQuote(c.Name) + " USING TIMESTAMP " + strconv.FormatInt(c.DroppedTime, 10) + ";")
		if !c.Dropped {
			b.WriteString("\nALTER TABLE " + t.cqlName() + " ADD ")
			c.appendCQL(b)
			b.WriteByte(';')
		}
	}
}

func (t *TableSchema) describeView(b *strings.Builder, internals bool) {
	b.WriteString("CREATE MATERIALIZED VIEW " + t.cqlName() + " AS\n    SELECT ")
	if t.ViewAllColumns {
		b.WriteByte('*')
	} else {
		// allColumnsInSelectOrder: the primary key, then the others by name.
		var names []string
		names = append(names, t.PartitionKey...)
		for _, c := range t.Clustering {
			names = append(names, c.Name)
		}
		var rest []string
		for _, c := range t.Columns {
			if !c.Dropped && !slices.Contains(names, c.Name) {
				rest = append(rest, c.Name)
			}
		}
		slices.Sort(rest)
		for i, n := range append(names, rest...) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(maybeQuote(n))
		}
	}
	base := t.ViewOf
	if ks, name, ok := strings.Cut(t.ViewOf, "."); ok {
		base = maybeQuote(ks) + "." + maybeQuote(name)
	}
	b.WriteString("\n    FROM " + base + "\n    WHERE " + t.ViewWhere + "\n    ")
	t.appendPrimaryKey(b)
	b.WriteByte('\n')
	t.appendOptions(b, " WITH ", internals)
}

// appendPrimaryKey is TableMetadata.appendPrimaryKey without its line end.
func (t *TableSchema) appendPrimaryKey(b *strings.Builder) {
	b.WriteString("PRIMARY KEY (")
	if len(t.PartitionKey) > 1 {
		b.WriteByte('(')
		for i, k := range t.PartitionKey {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(maybeQuote(k))
		}
		b.WriteByte(')')
	} else {
		b.WriteString(maybeQuote(t.PartitionKey[0]))
	}
	for _, c := range t.Clustering {
		b.WriteString(", " + maybeQuote(c.Name))
	}
	b.WriteByte(')')
}

// appendOptions is TableMetadata.appendTableOptions: each option on a
// line of its own after the first, and the statement's semicolon.
func (t *TableSchema) appendOptions(b *strings.Builder, with string, internals bool) {
	var opts []string
	if internals && t.ID != "" {
		opts = append(opts, "ID = "+t.ID)
	}
	if t.CompactStorage {
		opts = append(opts, "COMPACT STORAGE")
	}
	if len(t.Clustering) > 0 {
		var order []string
		for _, c := range t.Clustering {
			dir := "ASC"
			if c.Descending {
				dir = "DESC"
			}
			order = append(order, maybeQuote(c.Name)+" "+dir)
		}
		opts = append(opts, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
	}
	for _, o := range t.Options {
		opts = append(opts, o.Name+" = "+o.Value)
	}
	if len(opts) > 0 {
		b.WriteString(with + strings.Join(opts, "\n    AND "))
	}
	b.WriteByte(';')
}

// appendCQL is ColumnMetadata.appendCqlTo: name, type, static, mask.
func (c *Column) appendCQL(b *strings.Builder) {
	b.WriteString(maybeQuote(c.Name) + " ")
	c.Type.appendCQL(b)
	if c.Static {
		b.WriteString(" static")
	}
	if c.Mask != "" {
		b.WriteString(" MASKED WITH " + c.Mask)
	}
}

// describeIndex is IndexMetadata.appendCqlTo.
func (t *TableSchema) describeIndex(b *strings.Builder, ix Index) {
	if ix.Kind != "CUSTOM" {
		b.WriteString("CREATE INDEX " + maybeQuote(ix.Name) + " ON " + t.cqlName() + " (" + ix.Options["target"] + ");")
		return
	}
	b.WriteString("CREATE CUSTOM INDEX " + maybeQuote(ix.Name) + " ON " + t.cqlName() + " (" + ix.Options["target"] + ") USING ")
	b.WriteString(quoteString(ix.Options["class_name"]))
	var rest []string
	for k := range ix.Options {
		if k != "target" && k != "class_name" {
			rest = append(rest, k)
		}
	}
	if len(rest) > 0 {
		slices.Sort(rest)
		b.WriteString(" WITH OPTIONS = {")
		for i, k := range rest {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteString(k) + ": " + quoteString(ix.Options[k]))
		}
		b.WriteByte('}')
	}
	b.WriteByte(';')
}

// quoteString is a CQL string literal (CqlBuilder.appendWithSingleQuotes).
func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// DescribeTypes prints a CREATE TYPE statement (UserType.toCqlString) for
// each user type the table's columns use, those a type uses before it.
func (t *TableSchema) DescribeTypes() string {
	var b strings.Builder
	seen := map[string]bool{}
	var visit func(ty *Type)
	visit = func(ty *Type) {
		for _, p := range ty.Params {
			visit(p)
		}
		if ty.Kind != UDT || len(ty.FieldNames) == 0 {
			return
		}
		key := ty.Keyspace + "." + ty.Name
		if seen[key] {
			return
		}
		seen[key] = true
		b.WriteString("CREATE TYPE " + maybeQuote(ty.Keyspace) + "." + maybeQuote(ty.Name) + " (\n")
		for i, f := range ty.FieldNames {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString("    " + maybeQuote(f) + " ")
			ty.Params[i].appendCQL(&b)
		}
		b.WriteString("\n);\n\n")
	}
	for _, c := range t.Columns {
		if !c.Dropped {
			visit(c.Type)
		}
	}
	return b.String()
}
