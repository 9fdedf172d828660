package export

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"
)

// The value and level encodings of Parquet's data pages, as the format
// specification (parquet-format's Encodings.md) defines them: the
// RLE/bit-packing hybrid (levels, dictionary indices), PLAIN,
// DELTA_BINARY_PACKED and DELTA_LENGTH_BYTE_ARRAY. Written here rather
// than through arrow-go's column writers, which take values one at a
// time through several layers (levels, encoder, page buffers: half the
// export's CPU, in pprof); the records already come in columns, runs
// and arena spans, so a page is encoded in a pass over each. arrow-go
// still writes the file around them (page headers, column chunk and
// file metadata, statistics); the tests read every page back with
// parquet-go (pages_test.go, and cmd/sstabletool's on real sstables) and
// DuckDB.

// appendUvarint is ULEB128, the hybrid's and the delta encoding's
// integers.
func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// appendHybrid appends vals in the RLE/bit-packing hybrid at width bits
// a value (1 to 32): a run of 8 or more equal values is one RLE run, the
// rest bit-packed in groups of 8 (the last group padded with zeros,
// which a reader leaves out by the count it knows).
func appendHybrid[T int16 | int32](dst []byte, vals []T, width int) []byte {
	lit, litN := 0, 0 // the literals waiting: vals[lit:lit+litN]
	for i := 0; i < len(vals); {
		j := runEnd(vals, i)
		run := j - i
		if run < 8 {
			litN += run
			i = j
			continue
		}
		// A bit-packed run holds whole groups of 8: the run lends the
		// literals what they lack, and is RLE if 8 are left.
		if pad := (8 - litN%8) % 8; pad > 0 {
			litN += pad
			i += pad
			run -= pad
		}
		if run < 8 {
			litN += run
			i = j
			continue
		}
		dst = appendBitPacked(dst, vals[lit:lit+litN], width)
		dst = appendUvarint(dst, uint64(run)<<1)
		v := uint32(vals[i])
		for b := 0; b < (width+7)/8; b++ {
			dst = append(dst, byte(v>>(8*b)))
		}
		i = j
		lit, litN = i, 0
	}
	return appendBitPacked(dst, vals[lit:lit+litN], width)
}

// runEnd is the end of the run of equal values that starts at vals[i].
// Levels come in runs of thousands (a column without nulls, a list of one
// element each): past its first 16 values, a run is compared 8 bytes at a
// time.
func runEnd[T int16 | int32](vals []T, i int) int {
	v := vals[i]
	j := i + 1
	for lim := min(len(vals), i+16); j < lim; j++ {
		if vals[j] != v {
			return j
		}
	}
	size := int(unsafe.Sizeof(v))
	if (len(vals)-j)*size >= 8 {
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*size)
		pat := binary.LittleEndian.Uint64(b[i*size:]) // vals[i:i+8/size], all v
		per := 8 / size
		for (j+per)*size <= len(b) && binary.LittleEndian.Uint64(b[j*size:]) == pat {
			j += per
		}
	}
	for j < len(vals) && vals[j] == v {
		j++
	}
	return j
}

// appendBitPacked appends vals as one bit-packed run of the hybrid
// (nothing for none).
func appendBitPacked[T int16 | int32](dst []byte, vals []T, width int) []byte {
	if len(vals) == 0 {
		return dst
	}
	groups := (len(vals) + 7) / 8
	dst = appendUvarint(dst, uint64(groups)<<1|1)
	return packBits(dst, vals, width, groups*8)
}

// packBits appends vals at width bits each, least significant bit first,
// padded with zeros to count values.
func packBits[T int16 | int32](dst []byte, vals []T, width, count int) []byte {
	if width == 1 {
		// Levels of optional columns: 8 to a byte.
		k := 0
		for ; k+8 <= len(vals); k += 8 {
			g := vals[k : k+8 : k+8]
			dst = append(dst, byte(g[0]&1)|byte(g[1]&1)<<1|byte(g[2]&1)<<2|byte(g[3]&1)<<3|
				byte(g[4]&1)<<4|byte(g[5]&1)<<5|byte(g[6]&1)<<6|byte(g[7]&1)<<7)
		}
		for ; k < count; k += 8 {
			var b byte
			for m := range 8 {
				if k+m < len(vals) && vals[k+m]&1 != 0 {
					b |= 1 << m
				}
			}
			dst = append(dst, b)
		}
		return dst
	}
	var acc uint64
	n := 0
	mask := uint64(1)<<width - 1
	for k := range count {
		var v uint64
		if k < len(vals) {
			v = uint64(uint32(vals[k])) & mask
		}
		acc |= v << n
		n += width
		for n >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	if n > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// appendLevels appends levels as a V1 data page holds them: their
// hybrid encoding's length (4 bytes, little-endian), then it.
func appendLevels(dst []byte, levels []int16, maxLevel int16) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = appendHybrid(dst, levels, bits.Len16(uint16(maxLevel)))
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// appendIndices appends dictionary indices as an RLE_DICTIONARY page
// holds them: the bit width (one byte), then the hybrid.
func appendIndices(dst []byte, idx []int32, entries int) []byte {
	width := 1
	if entries > 1 {
		width = bits.Len(uint(entries - 1))
	}
	return appendHybrid(append(dst, byte(width)), idx, width)
}

// Delta encoding's shape: blocks of 128 deltas in 4 miniblocks of 32,
// as parquet-mr and arrow-go write it.
const (
	deltaBlock     = 128
	deltaMiniBlock = 32
)

// appendDeltaInt32 appends vals in DELTA_BINARY_PACKED, with int32's
// wrapping arithmetic for the deltas (as the specification has it for
// an INT32 column).
func appendDeltaInt32(dst []byte, vals []int32) []byte {
	dst = appendUvarint(dst, deltaBlock)
	dst = appendUvarint(dst, deltaBlock/deltaMiniBlock)
	dst = appendUvarint(dst, uint64(len(vals)))
	if len(vals) == 0 {
		return appendUvarint(dst, 0)
	}
	dst = appendUvarint(dst, zigzag(int64(vals[0])))
	var deltas [deltaBlock]int32
	for at := 1; at < len(vals); at += deltaBlock {
		n := min(deltaBlock, len(vals)-at)
		minDelta := int32(math.MaxInt32)
		for k := range n {
			d := vals[at+k] - vals[at+k-1]
			deltas[k] = d
			minDelta = min(minDelta, d)
		}
		dst = appendUvarint(dst, zigzag(int64(minDelta)))
		var widths [deltaBlock / deltaMiniBlock]int
		minis := (n + deltaMiniBlock - 1) / deltaMiniBlock
		for m := range minis {
			var or uint32
			for k := m * deltaMiniBlock; k < min(n, (m+1)*deltaMiniBlock); k++ {
				deltas[k] -= minDelta
				or |= uint32(deltas[k])
			}
			widths[m] = bits.Len32(or)
		}
		for m := range widths {
			dst = append(dst, byte(widths[m]))
		}
		for m := range minis {
			end := min(n, (m+1)*deltaMiniBlock)
			if widths[m] > 0 {
				dst = packBits(dst, deltas[m*deltaMiniBlock:end], widths[m], deltaMiniBlock)
			}
		}
	}
	return dst
}

// littleEndian: the machine's integers are laid out as PLAIN lays them
// out, and a batch's values are copied as they are.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// appendPlain appends fixed-width values in PLAIN: little-endian, one
// after the other.
func appendPlain[T int32 | int64 | float64](dst []byte, vals []T) []byte {
	if len(vals) == 0 {
		return dst
	}
	size := int(unsafe.Sizeof(vals[0]))
	if littleEndian {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), size*len(vals))...)
	}
	for _, v := range vals {
		switch x := any(v).(type) {
		case int32:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(x))
		case int64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case float64:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
		}
	}
	return dst
}
