package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/sstabletool/sstabletool/reader"
	"gopkg.in/yaml.v3"
)

// Profile is a workload description. See docs/workload.md for every field.
type Profile struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	Seed        uint64 `yaml:"seed" json:"seed"`
	// Ops is the number of operations (writes and interleaved reads);
	// Reads.Ops more reads follow them.
	Ops        int64      `yaml:"ops" json:"ops"`
	Partitions int64      `yaml:"partitions" json:"partitions"`
	Schema     SchemaSpec `yaml:"schema" json:"schema"`
	// RowsPerPartition is a distribution (see Dist); each partition's row
	// count is derived from the seed and the partition's index.
	RowsPerPartition string `yaml:"rows_per_partition" json:"rows_per_partition"`
	// PartitionOrder is how writes pick partitions: "sequential" (fill
	// partition 0, then 1, ...; wrap around to overwrite), "uniform", or
	// "zipf(s)" with s > 1.
	PartitionOrder string   `yaml:"partition_order" json:"partition_order"`
	Mix            Mix      `yaml:"mix" json:"mix"`
	TTL            TTLSpec  `yaml:"ttl" json:"ttl"`
	Reads          ReadSpec `yaml:"reads" json:"reads"`
	// TimestampStart is the write timestamp (microseconds) of op 0; op i
	// writes at TimestampStart+i so later writes win.
	TimestampStart int64 `yaml:"timestamp_start" json:"timestamp_start"`

	// Stress is set when the profile is a cassandra-stress user profile:
	// its table and distributions then take the place of Schema,
	// RowsPerPartition, PartitionOrder, Mix, TTL and Reads, and Partitions
	// counts partition seeds (see StressTable).
	Stress *StressTable `yaml:"-" json:"-"`
}

// SchemaSpec is the table shape.
type SchemaSpec struct {
	PartitionKey []ColumnSpec `yaml:"partition_key" json:"partition_key"`
	Clustering   []ColumnSpec `yaml:"clustering" json:"clustering"`
	Static       []ColumnSpec `yaml:"static" json:"static"`
	Columns      []ColumnSpec `yaml:"columns" json:"columns"`
}

// ColumnSpec is one column: a CQL type, a value size distribution for
// variable-length types, an element count distribution for collections, and
// what its values derive from.
type ColumnSpec struct {
	Name string `yaml:"name" json:"name"`
	// Type is a CQL type: bigint, int, smallint, tinyint, boolean, double,
	// float, timestamp, uuid, timeuuid, text, ascii, varchar, blob, or a
	// non-frozen list<T>, set<T>, map<K,V> of those.
	Type string `yaml:"type" json:"type"`
	// Size is the value length distribution of text/ascii/varchar/blob
	// (default 16).
	Size string `yaml:"size,omitempty" json:"size,omitempty"`
	// Elements is the element count distribution of a collection (default 4).
	Elements string `yaml:"elements,omitempty" json:"elements,omitempty"`
	// Gen is what values derive from: "partition" (the partition index),
	// "row" (the row index within the partition), "op" (the operation
	// index), "hash" (a hash of the partition and row) or "random".
	// Defaults: partition key "partition", clustering "row", others "random".
	Gen string `yaml:"gen,omitempty" json:"gen,omitempty"`
}

// Mix weighs the kinds of write. Weights need not sum to 1.
type Mix struct {
	Insert          float64 `yaml:"insert" json:"insert"`
	Overwrite       float64 `yaml:"overwrite" json:"overwrite"`
	DeletePartition float64 `yaml:"delete_partition" json:"delete_partition"`
	DeleteRow       float64 `yaml:"delete_row" json:"delete_row"`
	DeleteCell      float64 `yaml:"delete_cell" json:"delete_cell"`
	DeleteRange     float64 `yaml:"delete_range" json:"delete_range"`
}

// TTLSpec makes a fraction of writes expiring.
type TTLSpec struct {
	Fraction float64 `yaml:"fraction" json:"fraction"`
	Seconds  int32   `yaml:"seconds" json:"seconds"`
}

// ReadSpec adds reads: Ratio of the Ops interleaved with writes, then Ops
// more after all writes. The pattern weights pick how keys are chosen.
type ReadSpec struct {
	Ratio         float64 `yaml:"ratio" json:"ratio"`
	Ops           int64   `yaml:"ops" json:"ops"`
	Fixed         float64 `yaml:"fixed" json:"fixed"`
	Inside        float64 `yaml:"inside" json:"inside"`
	PartlyOutside float64 `yaml:"partly_outside" json:"partly_outside"`
	Outside       float64 `yaml:"outside" json:"outside"`
}

// ProfileError names the profile and the field that is wrong.
type ProfileError struct {
	File  string // "" for built-in or in-memory profiles
	Field string
	Err   error
}

func (e *ProfileError) Error() string {
	var b strings.Builder
	b.WriteString("profile")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

func (e *ProfileError) Unwrap() error { return e.Err }

// maxProfileBytes bounds what ParseProfile reads: profiles are small.
const maxProfileBytes = 1 << 20

// ParseProfile reads a YAML or JSON profile, in this package's format or
// a cassandra-stress user profile (recognised by its fields: keyspace,
// table_definition, columnspec, insert, queries, ...). Unknown fields are
// errors so a typo does not silently fall back to a default. file names the
// source in errors and may be "".
func ParseProfile(data []byte, file string) (*Profile, error) {
	if len(data) > maxProfileBytes {
		return nil, &ProfileError{File: file, Err: fmt.Errorf("%d bytes is larger than the %d-byte limit", len(data), maxProfileBytes)}
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil && hasStressField(&doc) {
		return parseStress(data, file)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	p := &Profile{}
	if err := dec.Decode(p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ProfileError{File: file, Err: errors.New("empty profile")}
		}
		return nil, &ProfileError{File: file, Err: err}
	}
	if err := p.Validate(); err != nil {
		var pe *ProfileError
		if errors.As(err, &pe) {
			pe.File = file
		}
		return nil, err
	}
	return p, nil
}

// LoadProfile reads a profile file, or a built-in profile when name has no
// path separator or extension and matches one (see Builtins).
func LoadProfile(name string) (*Profile, error) {
	if p, ok := Builtin(name); ok {
		return p, nil
	}
	data, err := reader.ReadFile(name) // refuses FIFOs and devices: os.ReadFile would block
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(name, "/.\\") {
			return nil, fmt.Errorf("profile %q: no such file and no built-in profile of that name (built-ins: %s)", name, strings.Join(BuiltinNames(), ", "))
		}
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return ParseProfile(data, name)
}

func perr(field string, format string, args ...any) error {
	return &ProfileError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Validate checks the profile and fills defaults.
func (p *Profile) Validate() error {
	if p.Partitions <= 0 {
		return perr("partitions", "must be > 0, got %d", p.Partitions)
	}
	if p.Partitions > 1<<40 {
		return perr("partitions", "must be <= %d", int64(1<<40))
	}
	if p.Ops < 0 || p.Reads.Ops < 0 {
		return perr("ops", "must be >= 0")
	}
	if p.TimestampStart == 0 {
		p.TimestampStart = 1_700_000_000_000_000
	}
	if p.Stress != nil {
		return nil // checked when it was parsed; the fields below do not apply
	}
	if len(p.Schema.PartitionKey) == 0 {
		return perr("schema.partition_key", "needs at least one column")
	}
	if len(p.Schema.Columns)+len(p.Schema.Static) > 1<<15 {
		return perr("schema.columns", "too many columns")
	}
	names := map[string]bool{}
	groups := []struct {
		field string
		cols  []ColumnSpec
		gen   string
	}{
		{"schema.partition_key", p.Schema.PartitionKey, "partition"},
		{"schema.clustering", p.Schema.Clustering, "row"},
		{"schema.static", p.Schema.Static, "random"},
		{"schema.columns", p.Schema.Columns, "random"},
	}
	for gi, g := range groups {
		for i := range g.cols {
			c := &g.cols[i]
			field := fmt.Sprintf("%s[%d]", g.field, i)
			if c.Name == "" {
				return perr(field+".name", "missing")
			}
			if names[c.Name] {
				return perr(field+".name", "duplicate column %q", c.Name)
			}
			names[c.Name] = true
			if c.Gen == "" {
				c.Gen = g.gen
			}
			switch c.Gen {
			case "partition", "row", "op", "hash", "random":
			default:
				return perr(field+".gen", "unknown %q (want partition, row, op, hash or random)", c.Gen)
			}
			if gi == 0 && c.Gen != "partition" && c.Gen != "hash" {
				return perr(field+".gen", "partition key values must derive from the partition (partition or hash), got %q", c.Gen)
			}
			t, err := parseType(c.Type)
			if err != nil {
				return perr(field+".type", "%v", err)
			}
			if t.collection != "" && gi < 2 {
				return perr(field+".type", "%s cannot be a non-frozen collection in the primary key", c.Type)
			}
			if c.Size != "" {
				if _, err := ParseDist(c.Size); err != nil {
					return perr(field+".size", "%v", err)
				}
			}
			if c.Elements != "" {
				if _, err := ParseDist(c.Elements); err != nil {
					return perr(field+".elements", "%v", err)
				}
			}
		}
	}
	if p.RowsPerPartition == "" {
		p.RowsPerPartition = "1"
	}
	if _, err := ParseDist(p.RowsPerPartition); err != nil {
		return perr("rows_per_partition", "%v", err)
	}
	if p.PartitionOrder == "" {
		p.PartitionOrder = "sequential"
	}
	if _, _, err := parseOrder(p.PartitionOrder); err != nil {
		return perr("partition_order", "%v", err)
	}
	m := p.Mix
	for _, w := range []float64{m.Insert, m.Overwrite, m.DeletePartition, m.DeleteRow, m.DeleteCell, m.DeleteRange} {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return perr("mix", "weights must be finite and >= 0")
		}
	}
	if m.Insert+m.Overwrite+m.DeletePartition+m.DeleteRow+m.DeleteCell+m.DeleteRange == 0 {
		p.Mix.Insert = 1
	}
	if p.TTL.Fraction < 0 || p.TTL.Fraction > 1 || math.IsNaN(p.TTL.Fraction) {
		return perr("ttl.fraction", "must be within 0..1")
	}
	if p.TTL.Fraction > 0 && p.TTL.Seconds <= 0 {
		return perr("ttl.seconds", "must be > 0 when ttl.fraction > 0")
	}
	r := p.Reads
	if r.Ratio < 0 || r.Ratio >= 1 || math.IsNaN(r.Ratio) {
		return perr("reads.ratio", "must be within 0..1 (exclusive of 1)")
	}
	for _, w := range []float64{r.Fixed, r.Inside, r.PartlyOutside, r.Outside} {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return perr("reads", "pattern weights must be finite and >= 0")
		}
	}
	if r.Fixed+r.Inside+r.PartlyOutside+r.Outside == 0 {
		p.Reads.Fixed, p.Reads.Inside, p.Reads.PartlyOutside, p.Reads.Outside = 1, 1, 1, 1
	}
	return nil
}

func parseOrder(s string) (kind string, zipfS float64, err error) {
	switch s {
	case "sequential", "uniform":
		return s, 0, nil
	}
	d, err := ParseDist(strings.Replace(s, "zipf(", "zipf(1,", 1))
	if err != nil || d.Kind != "zipf" || d.B <= 1 {
		return "", 0, fmt.Errorf("%q: want sequential, uniform or zipf(s) with s > 1", s)
	}
	return "zipf", d.B, nil
}

// cqlType is a parsed column type.
type cqlType struct {
	collection string // "", "list", "set", "map"
	key, value scalar // key is the set element / map key / list value type
}

type scalar struct {
	name  string
	fixed int // byte width, -1 for variable length
}

var scalars = map[string]int{
	"bigint": 8, "int": 4, "smallint": 2, "tinyint": 1, "boolean": 1, "double": 8, "float": 4,
	"timestamp": 8, "counter": 8, "uuid": 16, "timeuuid": 16, "date": 4, "time": 8,
	"text": -1, "ascii": -1, "varchar": -1, "blob": -1,
}

func parseScalar(s string) (scalar, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	w, ok := scalars[s]
	if !ok {
		return scalar{}, fmt.Errorf("unknown type %q", s)
	}
	return scalar{name: s, fixed: w}, nil
}

func parseType(s string) (cqlType, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return cqlType{}, errors.New("missing type")
	}
	low := strings.ToLower(s)
	for _, coll := range []string{"list", "set", "map"} {
		if strings.HasPrefix(low, coll+"<") && strings.HasSuffix(low, ">") {
			inner := low[len(coll)+1 : len(low)-1]
			t := cqlType{collection: coll}
			if coll == "map" {
				k, v, ok := strings.Cut(inner, ",")
				if !ok {
					return cqlType{}, fmt.Errorf("%q: map needs map<key,value>", s)
				}
				var err error
				if t.key, err = parseScalar(k); err != nil {
					return cqlType{}, fmt.Errorf("%q: %v", s, err)
				}
				if t.value, err = parseScalar(v); err != nil {
					return cqlType{}, fmt.Errorf("%q: %v", s, err)
				}
				return t, nil
			}
			el, err := parseScalar(inner)
			if err != nil {
				return cqlType{}, fmt.Errorf("%q: %v", s, err)
			}
			t.key = el
			return t, nil
		}
	}
	sc, err := parseScalar(low)
	if err != nil {
		return cqlType{}, err
	}
	return cqlType{value: sc}, nil
}
