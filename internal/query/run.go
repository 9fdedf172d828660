package query

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/cql"
	"github.com/sstabletool/sstabletool/merge"
)

// literal converts a constant to the bytes of column c's type, accepting
// the literal kinds CQL accepts for it.
func literal(c Column, l cql.Literal) ([]byte, error) {
	t := c.Type
	if l.Kind == cql.LitNull {
		return nil, fmt.Errorf("query: invalid null value in condition for column %s", c.Name)
	}
	ok := false
	switch t.Kind {
	case cqltype.Ascii, cqltype.Text:
		ok = l.Kind == cql.LitString
	case cqltype.Blob:
		ok = l.Kind == cql.LitHex
	case cqltype.Boolean:
		ok = l.Kind == cql.LitBool
	case cqltype.Int, cqltype.SmallInt, cqltype.TinyInt, cqltype.Bigint, cqltype.Varint, cqltype.Float, cqltype.Double:
		ok = l.Kind == cql.LitNumber
	case cqltype.UUID, cqltype.TimeUUID:
		ok = l.Kind == cql.LitUUID
	case cqltype.Timestamp:
		ok = l.Kind == cql.LitNumber || l.Kind == cql.LitString
	case cqltype.Date, cqltype.Inet:
		ok = l.Kind == cql.LitString
	case cqltype.Time:
		ok = l.Kind == cql.LitNumber
	}
	if !ok {
		return nil, fmt.Errorf("query: %s is %s, which cannot be compared with %s %s (or its type is not supported in a restriction)", c.Name, t.CQL(), l.Kind, l.Text)
	}
	v, err := t.FromString(l.Text)
	if err != nil {
		return nil, fmt.Errorf("query: %s: %v", c.Name, err)
	}
	return v, nil
}

// Value is one column of a result row. Its bytes alias the merge's
// buffers: valid only while the row is being handled.
type Value struct {
	Column *Column
	Null   bool
	// Bytes is a simple (or frozen) value; for a counter its context.
	Bytes []byte
	// Cells are a multi-cell column's live cells (collection elements or
	// UDT fields), in order.
	Cells []rows.Cell
}

// Row is one result row, its values aligned with Plan.Columns.
type Row []Value

// Run reads the rows the plan selects from the table merged as of o,
// calling emit for each live row, at most LIMIT rows.
func (p *Plan) Run(o merge.Options, emit func(Row) error) error {
	r := &runner{p: p, o: o, emit: emit, now: o.Now}
	if p.byKey {
		for _, k := range p.keys {
			part, err := r.get(k)
			if err != nil {
				return err
			}
			if part == nil {
				continue
			}
			if done, err := r.partition(part); err != nil || done {
				return err
			}
		}
		return nil
	}
	var sc *merge.Scanner
	var err error
	if p.fromTok != nil {
		sc, err = p.t.ScanFrom(p.fromTok.tok, o)
	} else {
		sc, err = p.t.Scan(o)
	}
	if err != nil {
		return err
	}
	part := p.t.Partitioner()
	for {
		pt, err := sc.Next()
		if err != nil || pt == nil {
			return err
		}
		tok := part.Token(pt.Header.Key)
		if f := p.fromTok; f != nil && (tok.Compare(f.tok) < 0 || !f.inclusive && tok.Compare(f.tok) == 0) {
			continue
		}
		if t := p.toTok; t != nil && (tok.Compare(t.tok) > 0 || !t.inclusive && tok.Compare(t.tok) == 0) {
			return nil
		}
		if done, err := r.partition(pt); err != nil || done {
			return err
		}
	}
}

type runner struct {
	p     *Plan
	o     merge.Options
	emit  func(Row) error
	now   int64
	count int64
	row   Row
}

func (r *runner) get(key []byte) (*merge.Partition, error) {
	if b := r.p.startBound(); b != nil {
		return r.p.t.GetFrom(key, *b, r.o)
	}
	return r.p.t.Get(key, r.o)
}

// partition emits the live rows of one merged partition; done when the
// limit is reached.
func (r *runner) partition(pt *merge.Partition) (done bool, err error) {
	keyParts := [][]byte{pt.Header.Key}
	if kt := r.p.t.KeyType(); kt.Kind == cqltype.Composite {
		comps, _, err := kt.Components(pt.Header.Key)
		if err != nil {
			return false, err
		}
		keyParts = keyParts[:0]
		for _, c := range comps {
			keyParts = append(keyParts, c.Value)
		}
	}
	var static *rows.Unfiltered
	rowsOut := 0
	for {
		u, err := pt.Next()
		if err != nil {
			return false, err
		}
		if u == nil {
			break
		}
		switch u.Kind {
		case rows.KindStaticRow:
			static = u.Clone()
			continue
		case rows.KindMarker:
			continue
		}
		in, past := r.p.selects(u.Clustering)
		if past {
			break
		}
		if !in || !r.live(u) {
			continue
		}
		rowsOut++
		if err := r.emitRow(keyParts, u, static); err != nil {
			return false, err
		}
		if r.p.limit > 0 && r.count >= r.p.limit {
			return true, nil
		}
	}
	if rowsOut == 0 && r.p.fullPartitions && static != nil && r.anyLiveCell(static) {
		if err := r.emitRow(keyParts, nil, static); err != nil {
			return false, err
		}
		if r.p.limit > 0 && r.count >= r.p.limit {
			return true, nil
		}
	}
	return false, nil
}

// selects reports whether a row's clustering meets the clustering
// restrictions, and whether it is past them in clustering order (the
// partition's later rows cannot meet them either).
func (p *Plan) selects(c [][]byte) (in, past bool) {
	types := p.t.ClusteringTypes()
	need := len(p.eq)
	if p.start != nil || p.end != nil {
		need++
	}
	if len(c) < need {
		return false, false // a row without the restricted clustering values (a compact table's)
	}
	for i, v := range p.eq {
		if d := types[i].Compare(c[i], v); d != 0 {
			return false, d > 0
		}
	}
	if p.start == nil && p.end == nil {
		return true, false
	}
	k := len(p.eq)
	t := types[k]
	byValue := func(a, b []byte) int {
		if t.Reversed {
			return -t.Compare(a, b)
		}
		return t.Compare(a, b)
	}
	if b := p.start; b != nil {
		if d := byValue(c[k], b.value); d < 0 || d == 0 && !b.inclusive {
			return false, t.Reversed
		}
	}
	if b := p.end; b != nil {
		if d := byValue(c[k], b.value); d > 0 || d == 0 && !b.inclusive {
			return false, !t.Reversed
		}
	}
	return true, false
}

// live is Row.hasLiveData: a live primary key liveness or a live cell.
func (r *runner) live(u *rows.Unfiltered) bool {
	if l := &u.Liveness; l.HasTimestamp && (!l.Expiring() || r.now < l.LocalExpirationTime) {
		return true
	}
	return r.anyLiveCell(u)
}

// anyLiveCell: a live cell of a column of the table (a dropped column's
// cells are not fetched: they keep no row alive).
func (r *runner) anyLiveCell(u *rows.Unfiltered) bool {
	hidden := r.p.hiddenRegular
	if u.Kind == rows.KindStaticRow {
		hidden = r.p.hiddenStatic
	}
	for i := range u.Cells {
		if c := &u.Cells[i]; cellLive(c, r.now) && !(c.Column < len(hidden) && hidden[c.Column]) {
			return true
		}
	}
	return false
}

// cellLive is Cell.isLive: not a tombstone, and not expired.
func cellLive(c *rows.Cell, now int64) bool {
	return !c.IsTombstone() && (!c.IsExpiring() || now < c.LocalDeletionTime)
}

// emitRow builds the selected values of a row (u nil: a partition with
// only its static row live) and hands it on.
func (r *runner) emitRow(key [][]byte, u, static *rows.Unfiltered) error {
	r.row = r.row[:0]
	for i := range r.p.Columns {
		c := &r.p.Columns[i]
		v := Value{Column: c, Null: true}
		switch c.Kind {
		case PartitionKey:
			v.Bytes, v.Null = key[c.Index], false
		case Clustering:
			if u != nil && c.Index < len(u.Clustering) && u.Clustering[c.Index] != nil {
				v.Bytes, v.Null = u.Clustering[c.Index], false
			}
		case Static:
			r.cellValue(&v, static, c)
		case Regular:
			r.cellValue(&v, u, c)
		}
		r.row = append(r.row, v)
	}
	r.count++
	return r.emit(r.row)
}

func (r *runner) cellValue(v *Value, u *rows.Unfiltered, c *Column) {
	if u == nil {
		return
	}
	multi := c.Type.IsMultiCell()
	for i := range u.Cells {
		cell := &u.Cells[i]
		if cell.Column != c.Index || !cellLive(cell, r.now) {
			continue
		}
		if !multi {
			v.Bytes, v.Null = cell.Value, false
			return
		}
		v.Cells = append(v.Cells, *cell)
		v.Null = false
	}
}
