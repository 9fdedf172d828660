// Package query runs a CQL SELECT (parsed by internal/cql) on a table's
// merged sstables (package merge): the live rows as of a time, through the
// indexes where the restrictions allow (merge.Get for partition keys,
// merge.GetFrom for a clustering slice within a partition, merge.ScanFrom
// for a token range), and printed as cqlsh prints them or as JSON.
//
// The restrictions are CQL's, checked as Cassandra's StatementRestrictions
// checks them: the partition key restricted whole by = or IN, or by
// token() ranges, or not at all; clustering columns by = on a prefix then
// at most one slice on the next; clustering restrictions only with the
// partition key restricted (a range of partitions with them needs ALLOW
// FILTERING). Whatever else CQL allows is refused, naming it.
package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/cql"
	"github.com/sstabletool/sstabletool/merge"
)

// Names are the table's names the sstables do not store: the keyspace and
// table (from the directory, or --schema), the partition key and
// clustering columns (--schema, or placeholders).
type Names struct {
	Keyspace, Table string
	PartitionKey    []string
	Clustering      []string
	// Dropped are columns the schema says were dropped: older sstables
	// still hold them, but the table has them no more, so no SELECT sees
	// them.
	Dropped []string
}

// ColumnKind is which part of the primary key or row a column is.
type ColumnKind uint8

const (
	PartitionKey ColumnKind = iota
	Clustering
	Static
	Regular
)

// Column is one column of the result.
type Column struct {
	Name string
	Kind ColumnKind
	// Index is the column's position among its kind: the key component,
	// the clustering column, or the united static or regular column.
	Index int
	Type  *cqltype.Type
}

// Plan is a SELECT resolved against a table: what to read and what to
// print.
type Plan struct {
	t       *merge.Table
	Columns []Column
	all     []Column // every column, key first

	// Partition keys to look up (= and IN on the whole key, serialized as
	// stored), sorted in token order; nil when the query ranges.
	keys    [][]byte
	byKey   bool
	fromTok *tokenBound // token range (nil: unbounded)
	toTok   *tokenBound

	// Clustering restrictions: equalities on a prefix, then a slice.
	eq         [][]byte
	start, end *bound // on the column after the equalities
	limit      int64
	// fullPartitions: no clustering restriction, so a partition with only
	// its static row live returns that row (returnStaticContentOnPartitionWithNoRows).
	fullPartitions bool
	// hiddenStatic, hiddenRegular mark the dropped columns (by united
	// index; nil for none): no SELECT fetches them.
	hiddenStatic, hiddenRegular []bool
}

// setAt is marks with i set, made n long when nil.
func setAt(marks []bool, i, n int) []bool {
	if marks == nil {
		marks = make([]bool, n)
	}
	marks[i] = true
	return marks
}

type tokenBound struct {
	tok       token.Token
	inclusive bool
}

type bound struct {
	value     []byte
	inclusive bool
}

// NewPlan resolves s against table t with names n. The keyspace and table
// of FROM must be the table's.
func NewPlan(s *cql.Select, t *merge.Table, n Names) (*Plan, error) {
	if err := checkTable(s, n); err != nil {
		return nil, err
	}
	keyTypes := []*cqltype.Type{t.KeyType()}
	if t.KeyType().Kind == cqltype.Composite {
		keyTypes = t.KeyType().Params
	}
	if len(n.PartitionKey) != len(keyTypes) || len(n.Clustering) != len(t.ClusteringTypes()) {
		return nil, fmt.Errorf("query: the names give %d partition key and %d clustering columns, the sstables %d and %d",
			len(n.PartitionKey), len(n.Clustering), len(keyTypes), len(t.ClusteringTypes()))
	}
	var all []Column
	for i, name := range n.PartitionKey {
		all = append(all, Column{Name: name, Kind: PartitionKey, Index: i, Type: keyTypes[i]})
	}
	for i, name := range n.Clustering {
		all = append(all, Column{Name: name, Kind: Clustering, Index: i, Type: t.ClusteringTypes()[i]})
	}
	// SELECT * lists the primary key, then the other columns in
	// alphabetical order (statics among them), as CQL does.
	var rest []Column
	p := &Plan{t: t}
	for i, c := range t.Schema().Static {
		if slices.Contains(n.Dropped, c.Name) {
			p.hiddenStatic = setAt(p.hiddenStatic, i, len(t.Schema().Static))
			continue
		}
		rest = append(rest, Column{Name: c.Name, Kind: Static, Index: i, Type: t.StaticTypes()[i]})
	}
	for i, c := range t.Schema().Regular {
		if slices.Contains(n.Dropped, c.Name) {
			p.hiddenRegular = setAt(p.hiddenRegular, i, len(t.Schema().Regular))
			continue
		}
		rest = append(rest, Column{Name: c.Name, Kind: Regular, Index: i, Type: t.RegularTypes()[i]})
	}
	slices.SortStableFunc(rest, func(a, b Column) int { return strings.Compare(a.Name, b.Name) })
	all = append(all, rest...)
	byName := map[string]Column{}
	for _, c := range all {
		byName[c.Name] = c
	}
	p.all = all
	if s.Columns == nil {
		p.Columns = all
	}
	for _, name := range s.Columns {
		c, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("query: undefined column name %s in table %s.%s (columns: %s)", name, n.Keyspace, n.Table, columnList(all))
		}
		p.Columns = append(p.Columns, c)
	}
	if s.HasLimit {
		p.limit = s.Limit
	}
	if err := p.restrict(s.Where, byName, keyTypes, n); err != nil {
		return nil, err
	}
	return p, nil
}

func columnList(cs []Column) string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// checkTable holds FROM to the table the sstables are.
func checkTable(s *cql.Select, n Names) error {
	want := n.Keyspace + "." + n.Table
	if s.Table != n.Table || s.Keyspace != "" && s.Keyspace != n.Keyspace {
		got := s.Table
		if s.Keyspace != "" {
			got = s.Keyspace + "." + s.Table
		}
		return fmt.Errorf("query: FROM %s, but the sstables are table %s (its directory, or --schema, names it)", got, want)
	}
	return nil
}

// restrict checks the WHERE clause as StatementRestrictions does and
// turns it into lookups and bounds.
func (p *Plan) restrict(where []cql.Relation, byName map[string]Column, keyTypes []*cqltype.Type, n Names) error {
	keyVals := make([][][]byte, len(keyTypes)) // per key component: = or IN values
	keySet := make([]bool, len(keyTypes))
	clust := make([]*cql.Relation, 0)
	var tokenRels []cql.Relation
	for i := range where {
		r := where[i]
		if r.Token {
			if err := checkTokenColumns(r, n.PartitionKey); err != nil {
				return err
			}
			tokenRels = append(tokenRels, r)
			continue
		}
		c, ok := byName[r.Columns[0]]
		if !ok {
			return fmt.Errorf("query: undefined column name %s in WHERE", r.Columns[0])
		}
		switch c.Kind {
		case Static, Regular:
			return fmt.Errorf("query: %s is not a primary key column: restricting it needs a secondary index or ALLOW FILTERING, which query does not support", c.Name)
		case PartitionKey:
			if r.Op != cql.Eq && r.Op != cql.In {
				return fmt.Errorf("query: only = and IN restrict the partition key column %s (%s is for clustering columns; use token(%s) %s ... for a range)", c.Name, r.Op, strings.Join(n.PartitionKey, ", "), r.Op)
			}
			if keySet[c.Index] {
				return fmt.Errorf("query: %s cannot be restricted by more than one relation if it includes an equality", c.Name)
			}
			keySet[c.Index] = true
			for _, l := range r.Values {
				v, err := literal(c, l)
				if err != nil {
					return err
				}
				keyVals[c.Index] = append(keyVals[c.Index], v)
			}
		case Clustering:
			clust = append(clust, &where[i])
		}
	}
	restricted := 0
	for _, s := range keySet {
		if s {
			restricted++
		}
	}
	if restricted > 0 && len(tokenRels) > 0 {
		return fmt.Errorf("query: the partition key cannot be restricted both by token() and by its columns")
	}
	if restricted > 0 && restricted < len(keyTypes) {
		var missing []string
		for i, s := range keySet {
			if !s {
				missing = append(missing, n.PartitionKey[i])
			}
		}
		return fmt.Errorf("query: the partition key must be restricted whole: %s missing (CQL would need ALLOW FILTERING, which query does not support)", strings.Join(missing, ", "))
	}
	if restricted == len(keyTypes) {
		p.byKey = true
		if err := p.keysOf(keyVals, keyTypes); err != nil {
			return err
		}
	}
	for _, r := range tokenRels {
		if err := p.tokenBound(r); err != nil {
			return err
		}
	}
	if len(clust) > 0 && !p.byKey {
		return fmt.Errorf("query: clustering columns can only be restricted with the partition key (= or IN): over a range of partitions CQL needs ALLOW FILTERING, which query does not support")
	}
	p.fullPartitions = len(clust) == 0
	return p.clustering(clust, byName)
}

func checkTokenColumns(r cql.Relation, key []string) error {
	if !slices.Equal(r.Columns, key) {
		return fmt.Errorf("query: token() takes the partition key columns in order: token(%s), not token(%s)", strings.Join(key, ", "), strings.Join(r.Columns, ", "))
	}
	return nil
}

// keysOf serializes every combination of the components' values, without
// repeats, in the order Cassandra reads them: partition key restrictions
// build a set ordered by the key's types (MultiCBuilder.build, a
// NavigableSet under the partition key comparator), one read per key in
// that order, not the token order of a range.
func (p *Plan) keysOf(vals [][][]byte, types []*cqltype.Type) error {
	combos := [][][]byte{{}}
	for _, vs := range vals {
		var next [][][]byte
		for _, c := range combos {
			for _, v := range vs {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	kt := p.t.KeyType()
	for _, c := range combos {
		if len(types) == 1 {
			p.keys = append(p.keys, c[0])
		} else {
			p.keys = append(p.keys, compositeKey(c))
		}
	}
	slices.SortFunc(p.keys, kt.Compare)
	p.keys = slices.CompactFunc(p.keys, func(a, b []byte) bool { return string(a) == string(b) })
	return nil
}

// compositeKey is a CompositeType serialization: each component as a
// 2-byte length, its bytes and an end-of-component byte 0.
func compositeKey(parts [][]byte) []byte {
	var b []byte
	for _, v := range parts {
		b = append(b, byte(len(v)>>8), byte(len(v)))
		b = append(b, v...)
		b = append(b, 0)
	}
	return b
}

func (p *Plan) tokenBound(r cql.Relation) error {
	l := r.Values[0]
	if l.Kind != cql.LitNumber && l.Kind != cql.LitString && l.Kind != cql.LitHex {
		return fmt.Errorf("query: token() is compared with a token (%s for this table's partitioner), not %s", p.t.Partitioner().Name(), l.Kind)
	}
	text := l.Text
	if l.Kind == cql.LitHex {
		text = strings.TrimPrefix(strings.TrimPrefix(text, "0x"), "0X")
	}
	tok, err := p.t.Partitioner().ParseToken(text)
	if err != nil {
		return fmt.Errorf("query: token %s: %v", l.Text, err)
	}
	b := &tokenBound{tok: tok, inclusive: r.Op == cql.Ge || r.Op == cql.Le}
	switch r.Op {
	case cql.Gt, cql.Ge:
		if p.fromTok != nil {
			return fmt.Errorf("query: more than one lower bound on token()")
		}
		p.fromTok = b
	case cql.Lt, cql.Le:
		if p.toTok != nil {
			return fmt.Errorf("query: more than one upper bound on token()")
		}
		p.toTok = b
	case cql.Eq:
		if p.fromTok != nil || p.toTok != nil {
			return fmt.Errorf("query: token() = cannot be combined with another bound on token()")
		}
		p.fromTok, p.toTok = &tokenBound{tok: tok, inclusive: true}, &tokenBound{tok: tok, inclusive: true}
	}
	return nil
}

// clustering checks the clustering restrictions (equalities on a prefix,
// then one slice on the next column, nothing after) and keeps them.
func (p *Plan) clustering(rels []*cql.Relation, byName map[string]Column) error {
	byIndex := map[int][]*cql.Relation{}
	for _, r := range rels {
		c := byName[r.Columns[0]]
		byIndex[c.Index] = append(byIndex[c.Index], r)
	}
	names := func(i int) string { return p.clusteringColumn(i).Name }
	for i := 0; i < len(p.t.ClusteringTypes()); i++ {
		rs := byIndex[i]
		if len(rs) == 0 {
			for j := i + 1; j < len(p.t.ClusteringTypes()); j++ {
				if len(byIndex[j]) > 0 {
					return fmt.Errorf("query: PRIMARY KEY column %q cannot be restricted as preceding column %q is not restricted", names(j), names(i))
				}
			}
			return nil
		}
		c := p.clusteringColumn(i)
		if len(rs) == 1 && rs[0].Op == cql.Eq {
			v, err := literal(c, rs[0].Values[0])
			if err != nil {
				return err
			}
			if p.start != nil || p.end != nil {
				return fmt.Errorf("query: clustering column %s cannot be restricted: the slice on %s must be the last restriction", c.Name, names(i-1))
			}
			p.eq = append(p.eq, v)
			continue
		}
		for _, r := range rs {
			switch r.Op {
			case cql.Eq:
				return fmt.Errorf("query: %s cannot be restricted by more than one relation if it includes an equality", c.Name)
			case cql.In:
				return fmt.Errorf("query: IN on the clustering column %s is not supported by query (use = or a range)", c.Name)
			}
			v, err := literal(c, r.Values[0])
			if err != nil {
				return err
			}
			b := &bound{value: v, inclusive: r.Op == cql.Ge || r.Op == cql.Le}
			if r.Op == cql.Gt || r.Op == cql.Ge {
				if p.start != nil {
					return fmt.Errorf("query: more than one lower bound on %s", c.Name)
				}
				p.start = b
			} else {
				if p.end != nil {
					return fmt.Errorf("query: more than one upper bound on %s", c.Name)
				}
				p.end = b
			}
		}
		for j := i + 1; j < len(p.t.ClusteringTypes()); j++ {
			if len(byIndex[j]) > 0 {
				return fmt.Errorf("query: clustering column %s cannot be restricted after the slice on %s (a slice must be the last clustering restriction)", names(j), c.Name)
			}
		}
		return nil
	}
	return nil
}

func (p *Plan) clusteringColumn(i int) Column {
	for _, c := range p.all {
		if c.Kind == Clustering && c.Index == i {
			return c
		}
	}
	return Column{}
}

// orderBounds are the slice's bounds in clustering order: a column
// declared DESC (a Reversed type) holds its greatest values first, so its
// value range's upper bound is where the slice starts.
func (p *Plan) orderBounds() (lo, hi *bound) {
	if p.start == nil && p.end == nil {
		return nil, nil
	}
	if p.t.ClusteringTypes()[len(p.eq)].Reversed {
		return p.end, p.start
	}
	return p.start, p.end
}

// startBound is where in a partition the rows the restrictions select
// begin, in clustering order: nil for the partition's start.
func (p *Plan) startBound() *clustering.Prefix {
	lo, _ := p.orderBounds()
	if len(p.eq) == 0 && lo == nil {
		return nil
	}
	values := slices.Clone(p.eq)
	kind := clustering.InclStartBound
	if lo != nil {
		values = append(values, lo.value)
		if !lo.inclusive {
			kind = clustering.ExclStartBound
		}
	}
	return &clustering.Prefix{Kind: kind, Values: values}
}
