package stats

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Validation is ValidationMetadata: what a reader checks the sstable
// against before trusting it.
type Validation struct {
	// Partitioner is the partitioner's class name, e.g.
	// "org.apache.cassandra.dht.Murmur3Partitioner", as the stored
	// (Java modified UTF-8) bytes.
	Partitioner         string
	BloomFilterFPChance float64
	TrailingBytes       []byte // see Stats.TrailingBytes
}

// Well-known partitioner classes.
const (
	Murmur3Partitioner         = "org.apache.cassandra.dht.Murmur3Partitioner"
	RandomPartitioner          = "org.apache.cassandra.dht.RandomPartitioner"
	ByteOrderedPartitioner     = "org.apache.cassandra.dht.ByteOrderedPartitioner"
	OrderPreservingPartitioner = "org.apache.cassandra.dht.OrderPreservingPartitioner"
	LocalPartitioner           = "org.apache.cassandra.dht.LocalPartitioner"
)

func decodeValidation(c *cursor) *Validation {
	n := c.i16("partitioner length")
	p := c.bytes(int(n), "partitioner class name")
	return &Validation{Partitioner: string(p), BloomFilterFPChance: c.f64("bloom filter fp chance")}
}

func (m *Validation) appendTo(dst []byte) ([]byte, error) {
	if len(m.Partitioner) > math.MaxUint16 {
		return dst, fmt.Errorf("stats: partitioner name of %d bytes exceeds writeUTF's limit", len(m.Partitioner))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(m.Partitioner)))
	dst = append(dst, m.Partitioner...)
	return appendF64(dst, m.BloomFilterFPChance), nil
}

// Compaction is CompactionMetadata: the partition-key cardinality sketch
// compaction uses to size bloom filters.
type Compaction struct {
	// Cardinality is the serialized clearspring HyperLogLogPlus, kept as
	// stored; EstimatedCardinality reads it.
	Cardinality   []byte
	TrailingBytes []byte // see Stats.TrailingBytes
}

func decodeCompaction(c *cursor) *Compaction {
	at := c.pos
	n := c.i32("cardinality estimator length")
	if c.err == nil && (n < 0 || int(n) > c.remaining()) {
		c.fail(at, fmt.Sprintf("cardinality estimator length within the %d bytes left, found %d", c.remaining(), n), nil)
	}
	return &Compaction{Cardinality: c.bytes(int(n), "cardinality estimator")}
}

func (m *Compaction) appendTo(dst []byte) ([]byte, error) {
	if len(m.Cardinality) > math.MaxInt32 {
		return dst, fmt.Errorf("stats: cardinality estimator of %d bytes", len(m.Cardinality))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(m.Cardinality)))
	return append(dst, m.Cardinality...), nil
}

// EstimatedCardinality is the number of distinct partition keys the sketch
// estimates (what sstablemetadata prints as "Estimated cardinality").
func (m *Compaction) EstimatedCardinality() (int64, error) {
	return HLLCardinality(m.Cardinality)
}

// Header is SerializationHeader.Component: the encoding statistics that
// Data.db's deltas are relative to, and the table's column types.
type Header struct {
	// EncodingStats (db/rows/EncodingStats.java): minima over the data,
	// stored as unsigned vints relative to the epochs below.
	MinTimestamp         int64 // microseconds
	MinLocalDeletionTime int64 // seconds
	MinTTL               int64 // seconds
	// The two int-sized minima as stored (deltas from their epochs), when
	// decoded. Cassandra 3.x/4.x cast them with (int), so a value that does
	// not fit an int is read wrapped (CASSANDRA-14092): MinLocalDeletionTime
	// and MinTTL are what Cassandra computes, these what the file holds.
	RawMinLocalDeletionTime, RawMinTTL uint64
	HasRaw                             bool // the Raw fields were decoded

	KeyType         TypeName
	ClusteringTypes []TypeName
	StaticColumns   []Column
	RegularColumns  []Column
	TrailingBytes   []byte // see Stats.TrailingBytes
}

// Column is one column of the serialization header, in stored order.
type Column struct {
	Name []byte // the column name's bytes (UTF-8 for CQL tables)
	Type TypeName
}

// EncodingStats epochs: 2015-09-22T00:00:00Z, in microseconds and seconds;
// the TTL epoch is 0.
const (
	TimestampEpoch    int64 = 1442880000 * 1000000
	DeletionTimeEpoch int64 = 1442880000
)

func decodeHeader(c *cursor, v format.Version) *Header {
	h := &Header{HasRaw: true}
	h.MinTimestamp = TimestampEpoch + int64(c.uvint("EncodingStats min timestamp"))
	// 5.0 reads the two int-sized minima with checked casts and refuses
	// what does not fit; 3.x/4.x cast them (Version.IntDelta).
	at := c.pos
	ldt := c.uvint("EncodingStats min local deletion time")
	var fits bool
	h.MinLocalDeletionTime, fits = v.IntDelta(ldt, DeletionTimeEpoch)
	if c.err == nil && !fits && v.CheckedIntVInts {
		c.fail(at, fmt.Sprintf("EncodingStats min local deletion time delta that fits an int, found %d", ldt), nil)
	}
	at = c.pos
	ttl := c.uvint("EncodingStats min TTL")
	h.MinTTL, fits = v.IntDelta(ttl, 0)
	if c.err == nil && !fits && v.CheckedIntVInts {
		c.fail(at, fmt.Sprintf("EncodingStats min TTL that fits an int, found %d", ttl), nil)
	}
	h.RawMinLocalDeletionTime, h.RawMinTTL = ldt, ttl
	h.KeyType = c.typeName("key type")
	h.ClusteringTypes = c.typeList("clustering type")
	h.StaticColumns = c.columns("static column")
	h.RegularColumns = c.columns("regular column")
	return h
}

func (c *cursor) columns(what string) []Column {
	at := c.pos
	n := c.count(at, int64(c.uvint(what+" count")), 2, what)
	if c.err != nil || n == 0 {
		return nil
	}
	out := make([]Column, 0, initialCap(n))
	for i := 0; i < n && c.err == nil; i++ {
		name := c.vintBytes(what + " name")
		out = append(out, Column{Name: name, Type: c.typeName(fmt.Sprintf("%s %q type", what, name))})
	}
	return out
}

// CastMinima lists the EncodingStats minima whose stored value is not a
// Java int, so that Cassandra 3.x/4.x read them wrapped: what a verifier
// reports.
func (h *Header) CastMinima() []string {
	if !h.HasRaw {
		return nil
	}
	var out []string
	if int64(h.RawMinLocalDeletionTime) != int64(int32(h.RawMinLocalDeletionTime)) {
		out = append(out, fmt.Sprintf("EncodingStats min local deletion time delta %d does not fit an int; Cassandra 3.x/4.x read it as %d", h.RawMinLocalDeletionTime, h.MinLocalDeletionTime))
	}
	if int64(h.RawMinTTL) != int64(int32(h.RawMinTTL)) {
		out = append(out, fmt.Sprintf("EncodingStats min TTL %d does not fit an int; Cassandra 3.x/4.x read it as %d", h.RawMinTTL, h.MinTTL))
	}
	return out
}

func (h *Header) appendTo(dst []byte, v format.Version) ([]byte, error) {
	dst = vint.AppendUnsigned(dst, uint64(h.MinTimestamp-TimestampEpoch))
	// A decoded value that was cast is written back as stored, so that a
	// file re-encodes byte for byte; otherwise Java writes the int delta
	// sign-extended.
	if got, _ := v.IntDelta(h.RawMinLocalDeletionTime, DeletionTimeEpoch); h.HasRaw && got == h.MinLocalDeletionTime {
		dst = vint.AppendUnsigned(dst, h.RawMinLocalDeletionTime)
	} else {
		d := h.MinLocalDeletionTime - DeletionTimeEpoch
		if d != int64(int32(d)) {
			if v.CheckedIntVInts || h.MinLocalDeletionTime != int64(int32(h.MinLocalDeletionTime)) {
				return dst, fmt.Errorf("stats: EncodingStats min local deletion time %d is more than an int away from the epoch", h.MinLocalDeletionTime)
			}
			// 3.x/4.x subtract two ints: the delta wraps, and reads back
			// (IntDelta) as the minimum.
			d = int64(int32(d))
		}
		dst = vint.AppendUnsigned(dst, uint64(d))
	}
	if got, _ := v.IntDelta(h.RawMinTTL, 0); h.HasRaw && got == h.MinTTL {
		dst = vint.AppendUnsigned(dst, h.RawMinTTL)
	} else {
		if h.MinTTL != int64(int32(h.MinTTL)) {
			return dst, fmt.Errorf("stats: EncodingStats min TTL %d does not fit an int", h.MinTTL)
		}
		dst = vint.AppendUnsigned(dst, uint64(h.MinTTL))
	}
	dst = appendVintBytes(dst, []byte(h.KeyType.Class))
	dst = appendTypeList(dst, h.ClusteringTypes)
	for _, cols := range [][]Column{h.StaticColumns, h.RegularColumns} {
		dst = vint.AppendUnsigned(dst, uint64(len(cols)))
		for _, col := range cols {
			dst = appendVintBytes(dst, col.Name)
			dst = appendVintBytes(dst, []byte(col.Type.Class))
		}
	}
	return dst, nil
}
