package cqltype

import (
	"bytes"
	"fmt"
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
