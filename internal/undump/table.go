package undump

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
)

// HeaderOfTable is the serialization header a table's sstables carry, built
// from its CQL definition (a --schema file or the node's schema): the key's
// type (a CompositeType of a multi-column key), the clustering types
// (ReversedType for DESC columns), and every static and regular column,
// dropped ones included (sstables written before the drop hold them), with
// the class strings Cassandra writes. Its EncodingStats are the epochs.
func HeaderOfTable(ts *cqltype.TableSchema) (*stats.Header, error) {
	h := &stats.Header{MinTimestamp: stats.TimestampEpoch, MinLocalDeletionTime: stats.DeletionTimeEpoch}
	if len(ts.PartitionKey) == 0 {
		return nil, fmt.Errorf("table %s has no partition key", ts.Name())
	}
	var parts []string
	for _, name := range ts.PartitionKey {
		c := ts.Column(name)
		if c == nil {
			return nil, fmt.Errorf("table %s: partition key column %s is not defined", ts.Name(), name)
		}
		parts = append(parts, c.Type.Class)
	}
	keyClass := parts[0]
	if len(parts) > 1 {
		keyClass = "org.apache.cassandra.db.marshal.CompositeType(" + strings.Join(parts, ",") + ")"
	}
	var err error
	if h.KeyType, err = typeName(keyClass); err != nil {
		return nil, fmt.Errorf("table %s: key type: %w", ts.Name(), err)
	}
	for _, cc := range ts.Clustering {
		c := ts.Column(cc.Name)
		if c == nil {
			return nil, fmt.Errorf("table %s: clustering column %s is not defined", ts.Name(), cc.Name)
		}
		h.ClusteringTypes = append(h.ClusteringTypes, stats.TypeName{Class: c.Type.Class, Type: c.Type})
	}
	for _, c := range ts.Columns {
		if slices.Contains(ts.PartitionKey, c.Name) || slices.ContainsFunc(ts.Clustering, func(cc cqltype.ClusteringColumn) bool { return cc.Name == c.Name }) {
			continue
		}
		col := stats.Column{Name: []byte(c.Name), Type: stats.TypeName{Class: c.Type.Class, Type: c.Type}}
		if c.Static {
			h.StaticColumns = append(h.StaticColumns, col)
		} else {
			h.RegularColumns = append(h.RegularColumns, col)
		}
	}
	sortHeaderColumns(h.StaticColumns)
	sortHeaderColumns(h.RegularColumns)
	return h, nil
}

func typeName(class string) (stats.TypeName, error) {
	t, err := cqltype.Parse(class)
	if err != nil {
		return stats.TypeName{}, err
	}
	return stats.TypeName{Class: class, Type: t}, nil
}

// sortHeaderColumns puts header columns in the order Cassandra stores them
// (Columns' order, rows.SortColumns).
func sortHeaderColumns(cols []stats.Column) {
	rc := make([]rows.Column, len(cols))
	byName := make(map[string]stats.Column, len(cols))
	for i, c := range cols {
		rc[i] = rows.Column{Name: string(c.Name), Complex: c.Type.Type != nil && c.Type.Type.IsMultiCell()}
		byName[string(c.Name)] = c
	}
	rows.SortColumns(rc)
	for i, c := range rc {
		cols[i] = byName[c.Name]
	}
}

// HeaderOfReference is a reference sstable's serialization header (--like),
// with the repairs the reader makes to it (a frozen UDT that 3.x wrote
// without its FrozenType, see sstable.HeaderFixes), and its partitioner.
func HeaderOfReference(s *sstable.SSTable) (*stats.Header, string, error) {
	st := s.Stats()
	if st == nil || st.Header == nil || st.Validation == nil {
		return nil, "", fmt.Errorf("%s: no serialization header or partitioner in Statistics.db", s.Path(format.ComponentStatistics))
	}
	h := *st.Header
	h.StaticColumns = slices.Clone(h.StaticColumns)
	h.RegularColumns = slices.Clone(h.RegularColumns)
	h.ClusteringTypes = slices.Clone(h.ClusteringTypes)
	s.ApplyHeaderFixes(&h)
	h.TrailingBytes, h.HasRaw = nil, false
	return &h, st.Validation.Partitioner, nil
}

// table is a header as the dump reader and renderer see it (dump.Table).
type table struct {
	hs   *sstable.HeaderSchema
	name string // the input's name, for messages
}

func newTable(v format.Version, h *stats.Header, name string) (*table, error) {
	hs, err := sstable.SchemaOfHeader(v, h)
	if err != nil {
		return nil, err
	}
	return &table{hs: hs, name: name}, nil
}

func (t *table) Schema() *rows.Schema             { return t.hs.Schema }
func (t *table) KeyType() *cqltype.Type           { return t.hs.KeyType }
func (t *table) ClusteringTypes() []*cqltype.Type { return t.hs.ClusteringTypes }
func (t *table) StaticTypes() []*cqltype.Type     { return t.hs.StaticTypes }
func (t *table) RegularTypes() []*cqltype.Type    { return t.hs.RegularTypes }
func (t *table) Path(component string) string     { return t.name }
