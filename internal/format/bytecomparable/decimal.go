package bytecomparable

import (
	"encoding/binary"
	"math/big"
	"math/bits"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

var (
	bigTen     = big.NewInt(10)
	bigHundred = big.NewInt(100)
)

// decimalDigits is BigDecimal.precision of an unscaled value: its number of
// decimal digits (1 for zero).
func decimalDigits(x *big.Int) int64 {
	a := new(big.Int).Abs(x)
	if a.Sign() == 0 {
		return 1
	}
	s := a.Text(10)
	return int64(len(s))
}

// appendDecimal encodes a decimal (DecimalType.asComparableBytes): the
// value as sign, base-100 exponent and base-100 mantissa digits, so that
// 1.1 and 1.10 encode alike. Zero is a single 0x80. A nonzero value is a
// header byte (0x80 for positive, 0x00 for negative, plus 0x40 plus the
// exponent's signed byte length), the exponent's bytes (negated for
// negative numbers), each mantissa digit rounded towards minus infinity
// plus 0x80, and a final 0x00.
func appendDecimal(dst []byte, t *cqltype.Type, v []byte) ([]byte, error) {
	if len(v) < 4 {
		return dst, valueErr(t, "%d bytes, too short for a scale", len(v))
	}
	scale := int64(int32(binary.BigEndian.Uint32(v)))
	if len(v) == 4 {
		return dst, valueErr(t, "no unscaled value after the scale")
	}
	unscaled := fromTwosComplement(v[4:])
	if unscaled.Sign() == 0 {
		return append(dst, 0x80), nil
	}
	negative := unscaled.Sign() < 0
	// The value is unscaled * 10^-scale. Find an even power s so that the
	// mantissa unscaled * 10^(s-scale) lies in (-1, 1); its base-100
	// exponent is -s/2.
	s := (scale - decimalDigits(unscaled)) &^ 1
	exponent := int32(-s >> 1)
	mexp := exponent
	if negative {
		mexp = -exponent
	}
	abs := mexp
	if abs < 0 {
		abs = -abs
	}
	n := 4 - bits.LeadingZeros32(uint32(abs))/8
	header := 0x40 + n
	if mexp < 0 {
		header = 0x40 - n
	}
	if !negative {
		header += 0x80
	}
	dst = append(dst, byte(header))
	for k := n - 1; k >= 0; k-- {
		dst = append(dst, byte(mexp>>(uint(k)*8)))
	}
	// mantissa = num / den with den = 10^(scale-s) > |num|.
	num := new(big.Int).Set(unscaled)
	den := new(big.Int).Exp(bigTen, big.NewInt(scale-s), nil)
	digit := new(big.Int)
	for num.Sign() != 0 {
		num.Mul(num, bigHundred)
		digit.Div(num, den) // Euclidean: rounds towards minus infinity as den > 0
		num.Mod(num, den)
		dst = append(dst, byte(digit.Int64()+0x80))
	}
	return append(dst, 0x00), nil
}
