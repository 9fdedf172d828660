package words

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"
)

// PrettyMemory is FBUtilities.prettyPrintMemory(size, sep): below 1 KiB
// the count and "B" ("123B" with sep "", "123 B" with " "), above it three
// decimals and a binary prefix ("1.063KiB", "65.630 KiB"). Two details of
// the Java decide digits: Math.scalb(long, int) resolves to the float
// overload, so the size is first rounded to a float's 24 bits (16842751 B
// prints as 16.063 MiB, not 16.062), and %.3f rounds half up where Go's
// rounds ties to even (1088 B is 1.0625 KiB, printed 1.063).
func PrettyMemory(size int64, sep string) string {
	abs := size
	if abs < 0 {
		abs = -abs // math.MinInt64 stays negative; as a uint64 it is 2^63, as Java's numberOfLeadingZeros sees it
	}
	prefix := (63 - bits.LeadingZeros64(uint64(abs))) / 10
	if prefix <= 0 {
		return fmt.Sprintf("%d%sB", size, sep)
	}
	// The float's value is mant·2^exp exactly, with mant below 2^24.
	frac, exp := math.Frexp(float64(float32(size)))
	mant := int64(frac * (1 << 24))
	shift := 10*prefix - (exp - 24)
	return fixedHalfUp(mant, uint(shift), 3) + sep + string("KMGTPE"[prefix-1]) + "iB"
}

// ToByteString is SSTableMetadataViewer.toByteString: "" for 0 (Java's
// null), "123 B", else one decimal and a 1024-based unit written kB, MB,
// GB... ("71.7 kB").
func ToByteString(b int64) string {
	switch {
	case b == 0:
		return ""
	case b < 1024:
		return fmt.Sprintf("%d B", b)
	}
	exp := int(math.Log(float64(b)) / math.Log(1024))
	if exp < 1 || exp > 5 {
		return fmt.Sprintf("%d B", b)
	}
	return fixedHalfUp(b, uint(10*exp), 1) + " " + string("kMGTP"[exp-1]) + "B"
}

// fixedHalfUp is n / 2^shift with the given decimals, rounded half up as
// Java's String.format("%.Nf") rounds (Go's %.Nf rounds ties to even).
// Quotients of powers of two are exact in binary, so ties are real.
func fixedHalfUp(n int64, shift uint, decimals int) string {
	neg := n < 0
	x := new(big.Int).SetInt64(n)
	x.Abs(x)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
	x.Mul(x, scale)
	q := new(big.Int).Rsh(x, shift)
	rem := new(big.Int).Sub(x, new(big.Int).Lsh(q, shift))
	if rem.Lsh(rem, 1).Cmp(new(big.Int).Lsh(big.NewInt(1), shift)) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	if len(digits) <= decimals {
		digits = strings.Repeat("0", decimals-len(digits)+1) + digits
	}
	out := digits
	if decimals > 0 {
		out = digits[:len(digits)-decimals] + "." + digits[len(digits)-decimals:]
	}
	if neg {
		out = "-" + out
	}
	return out
}
