package stats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// HLLCardinality estimates the cardinality held by a serialized clearspring
// stream-lib HyperLogLogPlus (the form CompactionMetadata stores; Cassandra
// uses precision 13, sparse precision 25).
//
// The stored form: int -2 (codec version 2, always negative), unsigned
// LEB128 varints p, sp and format; then for the sparse format (1) a varint
// count and that many delta-coded sorted varints, for the normal format (0)
// a varint byte length and 2^p 5-bit registers packed six to a big-endian
// int.
//
// Sparse sketches (all small tables) give exactly what clearspring
// computes: linear counting over 2^sp registers. Normal sketches follow the
// HLL++ estimator but without the empirical bias-correction tables, so an
// estimate between clearspring's linear-counting threshold and 5*2^p may
// differ from Cassandra's by that bias; outside that window it is the same.
func HLLCardinality(b []byte) (int64, error) {
	if len(b) < 4 {
		return 0, errors.New("stats: HyperLogLogPlus shorter than its version int")
	}
	ver := int32(binary.BigEndian.Uint32(b))
	if ver >= 0 {
		return 0, fmt.Errorf("stats: HyperLogLogPlus in the pre-version-2 legacy codec (first int %d) is not supported", ver)
	}
	pos := 4
	next := func(what string) (uint64, error) {
		var v uint64
		for shift := uint(0); shift < 35; shift += 7 {
			if pos >= len(b) {
				return 0, fmt.Errorf("stats: HyperLogLogPlus ends inside its %s varint", what)
			}
			c := b[pos]
			pos++
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				return v, nil
			}
		}
		return 0, fmt.Errorf("stats: HyperLogLogPlus %s varint longer than 5 bytes", what)
	}
	p, err := next("precision")
	if err != nil {
		return 0, err
	}
	sp, err := next("sparse precision")
	if err != nil {
		return 0, err
	}
	format, err := next("format")
	if err != nil {
		return 0, err
	}
	if p < 4 || p > 25 || sp < p || sp > 32 {
		return 0, fmt.Errorf("stats: HyperLogLogPlus precision p=%d sp=%d out of range", p, sp)
	}
	switch format {
	case 1: // sparse
		n, err := next("sparse set size")
		if err != nil {
			return 0, err
		}
		// Each entry is at least one varint byte; check before trusting n.
		if n > uint64(len(b)-pos) {
			return 0, fmt.Errorf("stats: HyperLogLogPlus sparse set of %d entries in %d bytes", n, len(b)-pos)
		}
		for i := uint64(0); i < n; i++ {
			if _, err := next("sparse entry"); err != nil {
				return 0, err
			}
		}
		m := math.Exp2(float64(sp))
		if float64(n) >= m {
			// Entries are distinct register indexes below 2^sp; a full or
			// overfull set would make linear counting infinite or NaN.
			return 0, fmt.Errorf("stats: HyperLogLogPlus sparse set of %d entries for %v registers (sp=%d)", n, m, sp)
		}
		return int64(math.Round(linearCounting(m, m-float64(n)))), nil
	case 0: // normal
		size, err := next("register bytes")
		if err != nil {
			return 0, err
		}
		if size > uint64(len(b)-pos) || size%4 != 0 {
			return 0, fmt.Errorf("stats: HyperLogLogPlus register set of %d bytes in %d", size, len(b)-pos)
		}
		words := b[pos : pos+int(size)]
		m := 1 << p
		if len(words)/4 < (m+5)/6 {
			return 0, fmt.Errorf("stats: HyperLogLogPlus register set of %d bytes cannot hold %d registers", size, m)
		}
		var sum, zeros float64
		for j := 0; j < m; j++ {
			word := binary.BigEndian.Uint32(words[(j/6)*4:])
			r := (word >> (5 * uint(j%6))) & 0x1f
			sum += math.Ldexp(1, -int(r))
			if r == 0 {
				zeros++
			}
		}
		fm := float64(m)
		estimate := alphaMM(int(p), fm) / sum
		h := estimate
		if zeros > 0 {
			h = linearCounting(fm, zeros)
		}
		if threshold, ok := hllThreshold(int(p)); ok && h < threshold || !ok && estimate <= 5*fm {
			return int64(math.Round(h)), nil
		}
		return int64(math.Round(estimate)), nil
	default:
		return 0, fmt.Errorf("stats: HyperLogLogPlus format %d is neither normal (0) nor sparse (1)", format)
	}
}

func linearCounting(m, zeros float64) float64 { return m * math.Log(m/zeros) }

func alphaMM(p int, m float64) float64 {
	switch p {
	case 4:
		return 0.673 * m * m
	case 5:
		return 0.697 * m * m
	case 6:
		return 0.709 * m * m
	}
	return 0.7213 / (1 + 1.079/m) * m * m
}

// hllThreshold is the linear-counting cut-over HLL++ uses for precisions
// 4..18 (from the HLL++ paper's empirical data, as clearspring has it).
func hllThreshold(p int) (float64, bool) {
	t := [...]float64{10, 20, 40, 80, 220, 400, 900, 1800, 3100, 6500, 11500, 20000, 50000, 120000, 350000}
	if p < 4 || p-4 >= len(t) {
		return 0, false
	}
	return t[p-4], true
}
