package cqltype

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"
	"unicode/utf8"
)

// appenderTypes are the types the Appenders have fast paths for, and some
// that fall through to the general methods.
var appenderTypes = append([]string{"varchar", "'" + m + "LexicalUUIDType'", "'" + m + "DateType'"}, fuzzTypes...)

// checkAppenders demands the same bytes and the same error from the
// Appenders as from the methods they stand for, appending after a prefix
// so that an Appender that ignores dst's contents fails too.
func checkAppenders(t *testing.T, typ *Type, v []byte) {
	t.Helper()
	prefix := []byte("prefix:")
	want, wantErr := typ.AppendJSON(append([]byte(nil), prefix...), v)
	got, gotErr := typ.JSONAppender()(append([]byte(nil), prefix...), v)
	if !bytes.Equal(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s JSONAppender(%x) = %q, %v; AppendJSON gives %q, %v", typ.CQL(), v, got, gotErr, want, wantErr)
	}
	want = append([]byte(nil), prefix...)
	s, wantErr := typ.AppendFormat(nil, v)
	if wantErr == nil {
		want = AppendJSONString(want, string(s))
	}
	got, gotErr = typ.StringJSONAppender()(append([]byte(nil), prefix...), v)
	if !bytes.Equal(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s StringJSONAppender(%x) = %q, %v; AppendFormat+AppendJSONString gives %q, %v", typ.CQL(), v, got, gotErr, want, wantErr)
	}
}

// TestAppendersMatchMethods runs every test value (and its prefixes)
// through both, then random values of each fixed width and random text
// rich in bytes that need escaping or a UTF-8 check.
func TestAppendersMatchMethods(t *testing.T) {
	for _, c := range append(append([]valueCase{}, hasAllTypesCases...), otherValueCases...) {
		typ := cqlType(t, c.typ)
		for n := 0; n <= len(c.value); n++ {
			checkAppenders(t, typ, c.value[:n])
		}
	}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("ab\"\\\x00\x1f\x7f\n\t\xc3\xa9\xe2\x82\xac\xff\x80 ~")
	for _, s := range appenderTypes {
		typ, err := ParseCQL(s)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3000; i++ {
			v := make([]byte, rng.Intn(40))
			if rng.Intn(2) == 0 {
				for j := range v {
					v[j] = alphabet[rng.Intn(len(alphabet))]
				}
			} else {
				rng.Read(v)
			}
			checkAppenders(t, typ, v)
		}
		for _, w := range []int{1, 2, 4, 8, 16} {
			for i := 0; i < 200; i++ {
				v := make([]byte, w)
				rng.Read(v)
				checkAppenders(t, typ, v)
			}
		}
	}
}

// TestAppendersShortDecimalsAndDates feeds the double and timestamp fast
// paths what real tables hold, which random bits rarely are: decimals of
// few digits, and instants of the last few centuries and around the
// cutover and year 10000 where the general path takes over.
func TestAppendersShortDecimalsAndDates(t *testing.T) {
	double, ts := cqlType(t, "double"), cqlType(t, "timestamp")
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 300000; i++ {
		k := rng.Intn(18)
		n := rng.Int63n(int64(math.Pow10(rng.Intn(18) + 1)))
		f := float64(n) / math.Pow10(k)
		if rng.Intn(2) == 0 {
			f = -f
		}
		if rng.Intn(8) == 0 {
			f = math.Nextafter(f, math.Inf(1))
		}
		checkAppenders(t, double, f64(f))
	}
	for _, f := range []float64{1e-3, 9.999999e6, 1e7, 0.1 + 0.2, 5083.55, 7000, 0.3, 1.0000000000000002, 9999999.999999998} {
		checkAppenders(t, double, f64(f))
		checkAppenders(t, double, f64(-f))
	}
	const cutover, end = gregorianCutoverDay * 86400000, 253402300800000
	for _, ms := range []int64{0, -1, 1, cutover, cutover - 1, cutover + 1, end, end - 1, end + 1, math.MaxInt64, math.MinInt64} {
		checkAppenders(t, ts, be64(ms))
	}
	for i := 0; i < 300000; i++ {
		checkAppenders(t, ts, be64(cutover+rng.Int63n(end-cutover+2_000_000_000)-1_000_000_000))
	}
}

// TestSafePrefix checks the eight-at-a-time scan against the table at
// every position of every byte value.
func TestSafePrefix(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 20; pos++ {
			v := bytes.Repeat([]byte{'a'}, 20)
			v[pos] = byte(c)
			want := 20
			if !jsonSafe[c] {
				want = pos
			}
			if got := safePrefix(v); got != want {
				t.Fatalf("byte %#x at %d: safePrefix = %d, want %d", c, pos, got, want)
			}
		}
	}
}

func FuzzAppenders(f *testing.F) {
	for i := range appenderTypes {
		f.Add(uint8(i), []byte("a\"b\\c\x01\xc3\xa9"))
		f.Add(uint8(i), []byte{0, 0, 0, 1, 0, 0, 0, 4})
	}
	types := make([]*Type, len(appenderTypes))
	for i, s := range appenderTypes {
		typ, err := ParseCQL(s)
		if err != nil {
			f.Fatal(err)
		}
		types[i] = typ
	}
	f.Fuzz(func(t *testing.T, which uint8, v []byte) {
		checkAppenders(t, types[int(which)%len(types)], v)
		if utf8.Valid(v) {
			checkAppenders(t, types[0], v)
		}
	})
}

// TestTimestampAppenderCache holds the per-second cache of timestamp
// values to AppendJSON over runs of values in one second, across seconds,
// days and years, before 1582 and after 9999, and of odd lengths.
func TestTimestampAppenderCache(t *testing.T) {
	typ, err := ParseCQL("timestamp")
	if err != nil {
		t.Fatal(err)
	}
	app := typ.CachingJSONAppender()
	rng := rand.New(rand.NewSource(4))
	base := []int64{0, -1, 1_700_000_000_000, -12_219_292_800_000, 253_402_300_799_000, -62_135_596_800_000, math.MaxInt64 - 5000, math.MinInt64}
	for i := 0; i < 200000; i++ {
		var v []byte
		switch rng.Intn(20) {
		case 0:
			v = make([]byte, rng.Intn(10))
		default:
			ms := base[rng.Intn(len(base))] + rng.Int63n(5000)
			v = binary.BigEndian.AppendUint64(nil, uint64(ms))
		}
		want, wantErr := typ.AppendJSON([]byte("x"), v)
		got, gotErr := app([]byte("x"), v)
		if string(got) != string(want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%x: got %s, %v; want %s, %v", v, got, gotErr, want, wantErr)
		}
	}
}
