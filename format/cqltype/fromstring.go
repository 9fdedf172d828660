package cqltype

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"
)

// FromString parses a value written the way AbstractType.fromString reads
// it — what users type for `dump -k` and `partitions` filters: text as is,
// numbers in decimal, uuids in canonical form, blobs in hex (0x optional),
// timestamps as milliseconds or RFC 3339, and composite (multi-column)
// partition keys as components joined by ':' (a literal ':' escaped as \:).
func (t *Type) FromString(s string) ([]byte, error) {
	switch t.Kind {
	case Ascii, Text:
		return []byte(s), nil
	case Blob, Custom:
		h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		return hex.DecodeString(h)
	case Boolean:
		switch strings.ToLower(s) {
		case "true":
			return []byte{1}, nil
		case "false":
			return []byte{0}, nil
		case "":
			return []byte{}, nil
		}
		return nil, fmt.Errorf("%q is not a boolean", s)
	case Int, SmallInt, TinyInt, Bigint, Counter, Time:
		bits := map[Kind]int{Int: 32, SmallInt: 16, TinyInt: 8, Bigint: 64, Counter: 64, Time: 64}[t.Kind]
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a %d-bit integer", s, bits)
		}
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, uint64(v))
		return b[8-bits/8:], nil
	case Varint:
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return VarintBytes(v), nil
	case Float, Double:
		bits := 64
		if t.Kind == Float {
			bits = 32
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if bits == 32 {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case UUID, TimeUUID:
		h := strings.ReplaceAll(s, "-", "")
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 16 {
			return nil, fmt.Errorf("%q is not a UUID", s)
		}
		return b, nil
	case Timestamp:
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
			return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05-0700", "2006-01-02T15:04:05-0700", "2006-01-02"} {
			if tm, err := time.Parse(layout, s); err == nil {
				return binary.BigEndian.AppendUint64(nil, uint64(tm.UnixMilli())), nil
			}
		}
		return nil, fmt.Errorf("%q is not a timestamp (milliseconds or RFC 3339)", s)
	case Date:
		tm, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a date (yyyy-mm-dd)", s)
		}
		days := tm.Unix() / 86400
		return binary.BigEndian.AppendUint32(nil, uint32(days+(1<<31))), nil
	case Inet:
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("%q is not an IP address", s)
		}
		if v4 := ip.To4(); v4 != nil {
			return v4, nil
		}
		return ip, nil
	case Composite:
		parts := splitEscaped(s, ':')
		if len(parts) > len(t.Params) {
			return nil, fmt.Errorf("%q has %d components, the key has %d", s, len(parts), len(t.Params))
		}
		var out []byte
		for i, p := range parts {
			v, err := t.Params[i].FromString(p)
			if err != nil {
				return nil, fmt.Errorf("component %d: %w", i, err)
			}
			if len(v) > 0xFFFF {
				return nil, fmt.Errorf("component %d is longer than 65535 bytes", i)
			}
			out = append(out, byte(len(v)>>8), byte(len(v)))
			out = append(out, v...)
			out = append(out, 0)
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot parse a %s value from text; give it as hex with --hex-key", t.CQL())
}

// VarintBytes is a varint value as Cassandra stores it, BigInteger.toByteArray:
// the shortest big-endian two's-complement bytes of v (one zero byte for 0).
func VarintBytes(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -v-1 in bytes, inverted.
	m := new(big.Int).Neg(v)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

func splitEscaped(s string, sep byte) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == sep {
			cur.WriteByte(sep)
			i++
			continue
		}
		if s[i] == sep {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(s[i])
	}
	return append(parts, cur.String())
}
