package catalog

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/reader"
)

// Merged is a table's sstables opened as one table, merged as Cassandra's
// read path merges them (package merge): what browse --merge shows.
type Merged struct {
	T *merge.Table
	// Name is the table's directory and the number of sstables merged.
	Name string
	// Options are the merge's (Now: when TTLs run out).
	Options merge.Options
	// Schema is the table's, from the command (nil: none).
	Schema *Schema

	mu      sync.Mutex // the merge.Table is not safe for concurrent use
	closed  bool
	readers sync.WaitGroup
}

// OpenMerged opens the sstables of paths (any component of each) as one
// merged table; they must be one table.
func OpenMerged(paths []string, access reader.Access, o merge.Options, schema *Schema) (*Merged, error) {
	t, err := merge.Open(paths, sstable.Options{Access: access})
	if err != nil {
		return nil, err
	}
	if schema != nil {
		t.DropColumns(schema.DroppedTimes)
	}
	name := filepath.Base(t.Dir().Dir)
	if t.Dir().Table != "" && t.Dir().HasID() {
		name = t.Dir().Table
		if t.Dir().Keyspace != "" {
			name = t.Dir().Keyspace + "." + name
		}
	}
	n := len(t.SSTables())
	return &Merged{T: t, Name: fmt.Sprintf("%s (%d sstables merged)", name, n), Options: o, Schema: schema}, nil
}

// Close closes the sstables once no background reader holds them.
func (m *Merged) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.readers.Wait()
	return m.T.Close()
}

func (m *Merged) hold() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.readers.Add(1)
	return true
}

// MergedPartition is one partition of the merged table.
type MergedPartition struct {
	Key     []byte
	KeyText string
	// Sources are the sstables that hold it (1-based numbers, oldest
	// first, as explain numbers them).
	Sources []int
	// Rows counts the merged rows (and range tombstone markers).
	Rows    int
	Deleted bool // a partition deletion survives the merge
}

// SourceText is "1,3,4".
func (p *MergedPartition) SourceText() string {
	var s []string
	for _, i := range p.Sources {
		s = append(s, fmt.Sprint(i))
	}
	return strings.Join(s, ",")
}

// Partitions merges the whole table and lists its partitions in token
// order (a partition the merge leaves empty is not one).
func (m *Merged) Partitions() ([]MergedPartition, error) {
	if !m.hold() {
		return nil, ErrClosed
	}
	defer m.readers.Done()
	m.mu.Lock()
	defer m.mu.Unlock()
	sc, err := m.T.Scan(m.Options)
	if err != nil {
		return nil, err
	}
	var out []MergedPartition
	for {
		p, err := sc.Next()
		if err != nil {
			return out, err
		}
		if p == nil {
			return out, nil
		}
		mp := MergedPartition{Key: bytes.Clone(p.Header.Key), KeyText: m.keyText(p.Header.Key), Deleted: !p.Header.Deletion.IsLive()}
		for _, s := range p.Sources {
			mp.Sources = append(mp.Sources, s+1)
		}
		for {
			u, err := p.Next()
			if err != nil {
				return out, err
			}
			if u == nil {
				break
			}
			if u.Kind != rows.KindStaticRow {
				mp.Rows++
			}
		}
		out = append(out, mp)
	}
}

func (m *Merged) keyText(key []byte) string {
	s, err := m.T.KeyType().Format(key)
	if err != nil {
		return fmt.Sprintf("%x", key)
	}
	return s
}

// MergedLine is one line of a merged partition: a row or marker, or one
// of its cells with the sstable it came from.
type MergedLine struct {
	Text string
	// Source is the sstable (1-based) the line's part came from: 0 for
	// none, -1 for a counter merged from several.
	Source int
}

// Lines renders a merged partition, each cell with its source sstable.
func (m *Merged) Lines(key []byte) ([]MergedLine, error) {
	if !m.hold() {
		return nil, ErrClosed
	}
	defer m.readers.Done()
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.T.Get(key, m.Options)
	if err != nil || p == nil {
		return nil, err
	}
	src := func(i int) int {
		switch {
		case i == merge.Merged:
			return -1
		case i < 0:
			return 0
		}
		return i + 1
	}
	var out []MergedLine
	if !p.Header.Deletion.IsLive() {
		out = append(out, MergedLine{Text: "partition " + cellfmt.Deletion(p.Header.Deletion), Source: src(p.DeletionSource)})
	}
	sch := m.T.Schema()
	for {
		u, err := p.Next()
		if err != nil {
			return out, err
		}
		if u == nil {
			return out, nil
		}
		prov := p.Provenance()
		switch u.Kind {
		case rows.KindMarker:
			out = append(out, MergedLine{Text: "range tombstone " + u.Bound.Kind.String() + " " + cellfmt.NamedClustering(m.Schema.clusteringNames(), m.T.ClusteringTypes(), u.Bound.Values, 0), Source: src(prov.Row)})
			continue
		case rows.KindStaticRow:
			out = append(out, MergedLine{Text: "static row", Source: src(prov.Row)})
		default:
			head := "row " + cellfmt.NamedClustering(m.Schema.clusteringNames(), m.T.ClusteringTypes(), u.Clustering, 0)
			if u.Liveness.HasTimestamp {
				head += " written " + cellfmt.Micros(u.Liveness.Timestamp)
			}
			if u.HasDeletion() {
				head += " " + cellfmt.Deletion(u.Deletion)
			}
			out = append(out, MergedLine{Text: head, Source: src(prov.Liveness)})
		}
		cols, types := sch.Regular, m.T.RegularTypes()
		if u.Kind == rows.KindStaticRow {
			cols, types = sch.Static, m.T.StaticTypes()
		}
		for i, cd := range u.ComplexDeletions {
			out = append(out, MergedLine{Text: "  " + cols[cd.Column].Name + " " + cellfmt.Deletion(cd.Deletion), Source: src(prov.ComplexDeletions[i])})
		}
		for i := range u.Cells {
			c := &u.Cells[i]
			out = append(out, MergedLine{Text: "  " + cellText(&cols[c.Column], types[c.Column], c), Source: src(prov.Cells[i])})
		}
	}
}

func cellText(col *rows.Column, t *cqltype.Type, c *rows.Cell) string {
	name, vt := cellfmt.CellName(col, t, c.Path)
	s := name
	switch {
	case c.IsTombstone():
		s += " deleted at " + cellfmt.Micros(c.Timestamp)
	case vt != nil && vt.Kind == cqltype.Empty, col.Complex && len(c.Value) == 0:
		s += " at " + cellfmt.Micros(c.Timestamp)
	default:
		s += " = " + cellfmt.Value(vt, c.Value, 60) + " at " + cellfmt.Micros(c.Timestamp)
	}
	if c.IsExpiring() && !c.IsTombstone() {
		s += fmt.Sprintf(", ttl %d", c.TTL)
	}
	return s
}

// Explain is why the merge keeps what it keeps of a partition: every
// version of every part, in every sstable, with its verdict.
func (m *Merged) Explain(key []byte) ([]string, error) {
	if !m.hold() {
		return nil, ErrClosed
	}
	defer m.readers.Done()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.T.Explain(key, m.Options)
	if err != nil {
		return nil, err
	}
	sch := m.T.Schema()
	var out []string
	out = append(out, fmt.Sprintf("partition %s: %d of %d sstables hold it", m.keyText(key), len(e.Holding), len(m.T.SSTables())))
	for i := range m.T.SSTables() {
		out = append(out, fmt.Sprintf("  [%d] %s", i+1, m.T.Name(i)))
	}
	for _, v := range e.PartitionDeletion {
		out = append(out, fmt.Sprintf("partition deletion [%d] %s: %s", v.SSTable+1, cellfmt.Deletion(v.Deletion), verdict(v)))
	}
	for _, en := range e.Entries {
		out = append(out, "")
		switch en.Kind {
		case rows.KindStaticRow:
			out = append(out, "static row:")
		case rows.KindMarker:
			out = append(out, "range tombstone "+en.Bound.Kind.String()+" "+cellfmt.NamedClustering(m.Schema.clusteringNames(), m.T.ClusteringTypes(), en.Bound.Values, 0)+":")
		default:
			out = append(out, "row "+cellfmt.NamedClustering(m.Schema.clusteringNames(), m.T.ClusteringTypes(), en.Clustering, 0)+":")
		}
		if en.Output == nil {
			out[len(out)-1] += " (nothing written)"
		}
		for _, v := range en.Versions {
			what := v.What.String()
			switch v.What {
			case merge.WhatCell:
				cols, types := sch.Regular, m.T.RegularTypes()
				if v.Static {
					cols, types = sch.Static, m.T.StaticTypes()
				}
				what = cellText(&cols[v.Column], types[v.Column], &v.Cell)
			case merge.WhatLiveness:
				what = "row liveness " + cellfmt.Micros(v.Liveness.Timestamp)
			case merge.WhatComplexDeletion, merge.WhatRowDeletion, merge.WhatRangeTombstone:
				what += " " + cellfmt.Deletion(v.Deletion)
			}
			out = append(out, fmt.Sprintf("  [%d] %s: %s", v.SSTable+1, what, verdict(v)))
		}
	}
	return out, nil
}

func verdict(v merge.Version) string {
	if v.Verdict == merge.Won {
		return "won"
	}
	s := "lost: " + v.Verdict.String()
	if v.Verdict == merge.Expired || v.Verdict == merge.Purged {
		s = "won, but " + v.Verdict.String()
	}
	if v.By != nil && v.By.SSTable >= 0 {
		s += fmt.Sprintf(" (by [%d])", v.By.SSTable+1)
	}
	return s
}

// KeyHeader is Table.KeyHeader for the merged table.
func (m *Merged) KeyHeader() string { return m.Schema.keyHeader() }
