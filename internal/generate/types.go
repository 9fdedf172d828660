package generate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/workload"
)

const marshal = "org.apache.cassandra.db.marshal."

// colType is a profile column's CQL type as the sstable stores it.
type colType struct {
	cql     string
	class   string // AbstractType class string (multi-cell for collections)
	fixed   int    // value width, -1 when variable
	kind    string // "list", "set", "map" for collections, else the scalar
	key     *colType
	elem    *colType
	size    workload.Dist
	count   workload.Dist
	gen     string
	isMulti bool
}

var scalars = map[string]struct {
	class string
	fixed int
}{
	"bigint": {"LongType", 8}, "int": {"Int32Type", 4}, "smallint": {"ShortType", 2}, "tinyint": {"ByteType", 1},
	"boolean": {"BooleanType", 1}, "double": {"DoubleType", 8}, "float": {"FloatType", 4},
	"timestamp": {"TimestampType", 8}, "uuid": {"UUIDType", 16}, "timeuuid": {"TimeUUIDType", 16},
	"text": {"UTF8Type", -1}, "varchar": {"UTF8Type", -1}, "ascii": {"AsciiType", -1}, "blob": {"BytesType", -1},
	"counter": {"CounterColumnType", -1},
}

func parseScalar(s string) (*colType, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	sc, ok := scalars[s]
	if !ok {
		return nil, fmt.Errorf("unsupported type %q", s)
	}
	return &colType{cql: s, class: marshal + sc.class, fixed: sc.fixed, kind: s}, nil
}

func parseColumn(spec workload.ColumnSpec, defGen string) (*colType, error) {
	t := strings.TrimSpace(strings.ToLower(spec.Type))
	var ct *colType
	if i := strings.IndexByte(t, '<'); i > 0 && strings.HasSuffix(t, ">") {
		kind, args := t[:i], strings.Split(t[i+1:len(t)-1], ",")
		ct = &colType{cql: t, kind: kind, fixed: -1, isMulti: true}
		var err error
		switch {
		case (kind == "list" || kind == "set") && len(args) == 1:
			if ct.elem, err = parseScalar(args[0]); err != nil {
				return nil, err
			}
			ct.class = marshal + map[string]string{"list": "ListType", "set": "SetType"}[kind] + "(" + ct.elem.class + ")"
		case kind == "map" && len(args) == 2:
			if ct.key, err = parseScalar(args[0]); err != nil {
				return nil, err
			}
			if ct.elem, err = parseScalar(args[1]); err != nil {
				return nil, err
			}
			ct.class = marshal + "MapType(" + ct.key.class + "," + ct.elem.class + ")"
		default:
			return nil, fmt.Errorf("unsupported type %q", spec.Type)
		}
	} else {
		var err error
		if ct, err = parseScalar(t); err != nil {
			return nil, err
		}
	}
	var err error
	size := spec.Size
	if size == "" {
		size = "16"
	}
	if ct.size, err = workload.ParseDist(size); err != nil {
		return nil, fmt.Errorf("column %s size: %w", spec.Name, err)
	}
	count := spec.Elements
	if count == "" {
		count = "4"
	}
	if ct.count, err = workload.ParseDist(count); err != nil {
		return nil, fmt.Errorf("column %s elements: %w", spec.Name, err)
	}
	for _, sub := range []*colType{ct.key, ct.elem} {
		if sub != nil {
			sub.size = ct.size
		}
	}
	ct.gen = spec.Gen
	if ct.gen == "" {
		ct.gen = defGen
	}
	return ct, nil
}

// mix64 is a bijection on 64-bit values (splitmix64's finalizer), so
// distinct inputs give distinct outputs: partition keys stay unique.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// appendValue appends the serialized value of scalar type t derived from
// n; order says whether values must sort as n does (clustering columns:
// n is then the row index and must fit the type).
func appendValue(dst []byte, t *colType, n uint64, order bool) []byte {
	switch t.kind {
	case "bigint", "timestamp":
		if t.kind == "timestamp" && order {
			n = 1_700_000_000_000 + n
		}
		return binary.BigEndian.AppendUint64(dst, n)
	case "int":
		return binary.BigEndian.AppendUint32(dst, uint32(n))
	case "smallint":
		return binary.BigEndian.AppendUint16(dst, uint16(n))
	case "tinyint":
		return append(dst, byte(n))
	case "boolean":
		return append(dst, byte(n&1))
	case "double":
		if order {
			return binary.BigEndian.AppendUint64(dst, math.Float64bits(float64(n)))
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(float64(n%1_000_000)/100))
	case "float":
		if order {
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(n)))
		}
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(n%1_000_000)/100))
	case "uuid", "timeuuid":
		// A version-1 UUID whose timestamp is n (ordered) or random bits.
		ts := n
		if !order {
			ts = n & (1<<60 - 1)
		}
		msb := (ts&0xFFFFFFFF)<<32 | (ts>>32&0xFFFF)<<16 | 0x1000 | (ts >> 48 & 0x0FFF)
		dst = binary.BigEndian.AppendUint64(dst, msb)
		return binary.BigEndian.AppendUint64(dst, 0x8000000000000000|mix64(n)>>2)
	case "counter":
		// A context of one global shard (a counter written by one node
		// since Cassandra 2.1): id, clock 1, count.
		return appendCounter(dst, []counterShard{{id: counterID(n % 3), clock: 1, count: int64(n%100) + 1, global: true}})
	default: // text, varchar, ascii, blob
		size := int(t.size.Sample(unit(mix64(n ^ 0x5bd1e995))))
		if order {
			// fixed-width hex of n: byte order is numeric order
			return fmt.Appendf(dst, "%016x", n)
		}
		const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
		h := n
		for i := 0; i < size; i++ {
			if i%8 == 0 {
				h = mix64(h + uint64(i))
			}
			dst = append(dst, alphabet[h%uint64(len(alphabet))])
			h /= uint64(len(alphabet))
		}
		return dst
	}
}

// maxOrdered is how many distinct ordered values a clustering type holds.
func maxOrdered(t *colType) uint64 {
	switch t.kind {
	case "tinyint":
		return 1 << 7
	case "smallint":
		return 1 << 15
	case "int":
		return 1 << 31
	case "boolean":
		return 2
	case "float":
		return 1 << 24
	}
	return 1 << 62
}

// counterShard is one shard of a counter context to write.
type counterShard struct {
	id            [16]byte
	clock, count  int64
	global, local bool
}

// counterID is the id of counter node i: a fixed version-1 UUID per node,
// the same in every table and history.
func counterID(i uint64) [16]byte {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:], 0x0000_0000_0000_1000|(i+1)<<32)
	binary.BigEndian.PutUint64(id[8:], 0x8000_0000_0000_0000|mix64(i+7)>>2)
	return id
}

// appendCounter appends a counter context (CounterContext's layout): the
// count of global and local shards, their indexes (a global one as index
// + Short.MIN_VALUE), then the shards sorted by id.
func appendCounter(dst []byte, shards []counterShard) []byte {
	slices.SortFunc(shards, func(a, b counterShard) int { return bytes.Compare(a.id[:], b.id[:]) })
	n := 0
	for _, s := range shards {
		if s.global || s.local {
			n++
		}
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	for i, s := range shards {
		switch {
		case s.global:
			dst = binary.BigEndian.AppendUint16(dst, uint16(int16(i-32768)))
		case s.local:
			dst = binary.BigEndian.AppendUint16(dst, uint16(i))
		}
	}
	for _, s := range shards {
		dst = append(dst, s.id[:]...)
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.clock))
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.count))
	}
	return dst
}
