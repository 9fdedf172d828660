package dump

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
	"time"
)

// TestAppendDateMatchesInstant holds the fast instant rendering (and its
// day cache) to instant, which formats with the time package, for
// timestamps around every boundary it treats apart: days, years 0 and
// 9999, the epoch, negative values, fractions of 0, 3 and 6 digits.
func TestAppendDateMatchesInstant(t *testing.T) {
	r := &renderer{}
	check := func(micros bool, v int64) {
		t.Helper()
		unit := time.Second
		if micros {
			unit = time.Microsecond
		}
		want := `"` + instant(unit, v) + `"`
		if got := string(r.appendDate(nil, micros, v)); got != want {
			t.Fatalf("appendDate(micros=%v, %d) = %s, want %s", micros, v, got, want)
		}
	}
	edges := []int64{0, 1, -1, 59, 60, 86399, 86400, -86400, -86401, 951782400, 1700000000,
		-62167219200, -62167219201, 253402300799, 253402300800, math.MaxInt32, math.MinInt32,
		math.MaxInt64 / 1_000_000, math.MinInt64 / 1_000_000}
	rng := rand.New(rand.NewSource(1))
	for _, e := range edges {
		for _, d := range []int64{-1, 0, 1} {
			check(false, e+d)
			for _, frac := range []int64{0, 1, 999, 1000, 123000, 999999, 500500} {
				check(true, (e+d)*1_000_000+frac)
			}
		}
	}
	for _, v := range []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1} {
		check(true, v)
		check(false, v)
	}
	for i := 0; i < 200000; i++ {
		var v int64
		switch i % 4 {
		case 0:
			v = rng.Int63n(1 << 45) // seconds, years around 0..1,000,000
			if rng.Intn(2) == 0 {
				v = -v
			}
			check(false, v)
		case 1:
			check(false, 1_700_000_000+rng.Int63n(86400*3)) // same few days: the cache
		case 2:
			check(true, 1_700_000_000_000_000+rng.Int63n(86400*3_000_000))
		default:
			v = int64(rng.Uint64())
			check(true, v)
			check(false, v)
		}
	}
}

func TestAppendDateRaw(t *testing.T) {
	r := &renderer{raw: true}
	if got := string(r.appendDate(nil, true, -1700000000123456)); got != `"-1700000000123456"` {
		t.Errorf("raw timestamp = %s", got)
	}
}

func TestAppendInt(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	check := func(v int64) {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %s, want %s", v, got, want)
		}
	}
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 101, math.MaxInt64, math.MinInt64, -1} {
		check(v)
	}
	for p := int64(1); p > 0 && p < math.MaxInt64/10; p *= 10 {
		check(p - 1)
		check(p)
		check(p + 1)
	}
	for i := 0; i < 100000; i++ {
		check(rng.Int63() >> rng.Intn(63))
	}
}
